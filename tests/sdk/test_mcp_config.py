"""`personal-memory-mcp`'s start: each missing piece is one clear line (exit 2), never a stack trace;
and the words it uses for client names and refusals."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from mcp_stdio import ROOT, SDK, server_command
from personal_memory_sdk.mcp_config import ConfigError, load_config
from personal_memory_sdk.mcp_words import agent_name, describe_shape, refusal_words

KEYS = {
    "host": {"access_key_id": "AKIDHOST", "secret_access_key": "host-secret-value", "arn": "arn:h"},
    "worker": {"access_key_id": "AKIDWORK", "secret_access_key": "work-secret-value", "arn": "arn:w"},
}


def _start(
    args: list[str], env: dict[str, str] | None = None, *, command: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PERSONAL_MEMORY_"))}
    clean.update({"PYTHONPATH": str(SDK), "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull})
    return subprocess.run(
        command or server_command(args),
        cwd=ROOT,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )


@pytest.fixture
def keys_file(tmp_path: Path) -> Path:
    path = tmp_path / "credentials.json"
    path.write_text(json.dumps(KEYS))
    return path


@pytest.mark.slow  # a subprocess each (the real entry point)
@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([], "no API address: pass --base-url URL or set PERSONAL_MEMORY_URL"),
        (["--base-url", "ftp://x"], "--base-url must be an http(s) address"),
        (["--base-url", "http://127.0.0.1:8000"], "no user: pass --user USER_ID or set PERSONAL_MEMORY_USER"),
        (["--base-url", "http://127.0.0.1:8000", "--user", "al ice"], "--user must be 1 to 128"),
        (["--base-url", "http://127.0.0.1:8000", "--user", ".."], "--user must be 1 to 128"),
        (["--base-url", "http://127.0.0.1:8000", "--user", "alice"], "no host credentials: pass --host-profile"),
        (
            ["--base-url", "http://127.0.0.1:8000", "--user", "alice", "--credentials-file", "/nope/credentials.json"],
            "host credentials: cannot read /nope/credentials.json",
        ),
        (
            ["--base-url", "http://127.0.0.1:8000", "--user", "alice", "--host-profile", "missing-host"],
            "host credentials: AWS profile 'missing-host' (--host-profile) does not exist",
        ),
        (["--base-url", "http://[::1"], "--base-url must be an http(s) address"),  # urlsplit raises
        (["--base-url", "http://127.0.0.1:99999"], "--base-url must be an http(s) address"),
        (["--base-url", "http://me:hunter2@127.0.0.1:8000"], "--base-url must not hold a user name or password"),
        (
            ["--base-url", "http://127.0.0.1:8000", "--user", "a", "--region", "us east\n1"],
            "--region must be an AWS region",
        ),
    ],
)
def test_each_missing_piece_is_one_clear_line_and_exit_2(args: list[str], says: str) -> None:
    result = _start(args)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"personal-memory-mcp: {says}"), result.stderr
    assert "Traceback" not in result.stderr and result.stdout == "" and "hunter2" not in result.stderr


@pytest.mark.slow
def test_a_file_without_the_worker_role_names_the_role_and_never_a_secret(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    path.write_text(json.dumps({"host": KEYS["host"]}))
    result = _start(["--base-url", "http://127.0.0.1:8000", "--user", "alice", "--credentials-file", str(path)])
    assert result.returncode == 2
    assert "worker credentials:" in result.stderr and "has no 'worker' credentials" in result.stderr
    assert "host-secret-value" not in result.stderr and "Traceback" not in result.stderr


def test_a_launch_missing_a_piece_says_so_before_the_mcp_sdk_is_imported() -> None:
    """The MCP SDK's imports take most of a second of CPU: a client starting a misconfigured server (and every
    launch above) hears why at once. The console script's own target, run as its wrapper runs it."""
    [python, _, code] = server_command([])
    listing = "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))"
    result = _start(
        [], command=[python, "-c", code.replace("sys.exit(main())", f"code = main([]); {listing}; sys.exit(code)")]
    )
    assert result.returncode == 2 and "no API address" in result.stderr, result.stderr
    assert result.stdout.strip() == "[]", result.stdout


def test_the_environment_configures_everything(keys_file: Path) -> None:
    config = load_config(
        [],
        {
            "PERSONAL_MEMORY_URL": "http://127.0.0.1:8000/",
            "PERSONAL_MEMORY_USER": "auth0|5f00ab",
            "PERSONAL_MEMORY_CREDENTIALS_FILE": str(keys_file),
            "PERSONAL_MEMORY_TRUSTED_CLIENTS": "Claude Code, my-agent",
            "PERSONAL_MEMORY_OUTCOME_WAIT": "1.5",
        },
    )
    assert (config.base_url, config.user_id, config.outcome_wait) == ("http://127.0.0.1:8000", "auth0|5f00ab", 1.5)
    assert config.host.access_key == "AKIDHOST" and config.worker.access_key == "AKIDWORK"
    assert config.trusts("claude-code") and config.trusts("my-agent") and not config.trusts("claude-desktop")
    assert "secret" not in repr(config)


def test_flags_win_over_the_environment_and_nothing_is_trusted_by_default(keys_file: Path) -> None:
    env = {"PERSONAL_MEMORY_URL": "http://elsewhere:1", "PERSONAL_MEMORY_USER": "bob"}
    config = load_config(["--base-url", "http://127.0.0.1:8000", "--credentials-file", str(keys_file)], env)
    assert config.base_url == "http://127.0.0.1:8000" and config.user_id == "bob"
    assert config.trusted_clients == frozenset()


def test_named_aws_profiles_sign_as_host_and_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "aws-credentials"
    shared.write_text(
        "[memory-host]\naws_access_key_id = AKIDPROFILEHOST\naws_secret_access_key = s1\n"
        "[memory-worker]\naws_access_key_id = AKIDPROFILEWORK\naws_secret_access_key = s2\n"
    )
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(shared))
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    config = load_config(
        [
            "--base-url",
            "https://api.example.com",
            "--user",
            "alice",
            "--host-profile",
            "memory-host",
            "--worker-profile",
            "memory-worker",
        ],
        {},
    )
    assert config.host.access_key == "AKIDPROFILEHOST" and config.worker.access_key == "AKIDPROFILEWORK"


def test_environment_keys_serve_both_roles_when_no_profile_is_named() -> None:
    env = {"AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env-secret"}
    config = load_config(["--base-url", "https://api.example.com", "--user", "alice"], env)
    assert config.host.access_key == config.worker.access_key == "AKIDENV"


@pytest.mark.parametrize("wait", ["-1", "31", "soon"])
def test_an_outcome_wait_outside_0_to_30_seconds_is_refused(keys_file: Path, wait: str) -> None:
    env = {"PERSONAL_MEMORY_OUTCOME_WAIT": wait}
    with pytest.raises(ConfigError):
        load_config(["--base-url", "http://x:1", "--user", "a", "--credentials-file", str(keys_file)], env)


@pytest.mark.parametrize(
    ("client", "agent"),
    [
        ("Claude Desktop", "claude-desktop"),
        ("claude-ai", "claude-ai"),
        ("Zéd  Editor!", "zed-editor"),
        ("Visual Studio Code", "visual-studio-code"),
        ("cursor/1.2 (vscode)", "cursor-1.2-vscode"),
        ("\u202egnp.exe\u200b", "gnp.exe"),
        ("日本語", "mcp-client"),
        ("", "mcp-client"),
        (None, "mcp-client"),
        ("---", "mcp-client"),
        ("a" * 300, "a" * 128),
        ("x" * 127 + " y", "x" * 127),
        ("GitHub Copilot 2", "github-copilot-2"),
        # Credential-shaped names: the API's detector knows keys by their case, so once lower-cased
        # "akiaz7qw2erty5uiopas" was registered (an AWS key id given back by upper-casing).
        ("AKIA" + "Z7QW2ERTY5UIOPAS", "mcp-client"),
        ("AKIA Z7QW 2ERT Y5UI OPAS", "mcp-client"),
        ("AKIA\u200bZ7QW2ERTY5UIOPAS", "mcp-client"),
        ("ＡＫＩＡ" + "Z7QW2ERTY5UIOPAS", "mcp-client"),
        ("ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5", "mcp-client"),
        ("xoxb-123456789012-1234567890123-" + "aB3dE5gH7jK9mN1pQ3sT5vW7", "mcp-client"),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "mcp-client"),
    ],
)
def test_client_names_become_agent_ids_by_the_id_rules(client: object, agent: str) -> None:
    name = agent_name(client)
    assert name == agent
    assert 1 <= len(name) <= 128 and all(c.isascii() and (c.isalnum() or c in "._:-") for c in name)


def test_refusals_are_told_in_words_with_the_credential_shape() -> None:
    assert refusal_words("credential:aws_access_key_id") == "it looked like an AWS access key ID"
    assert refusal_words("credential:github_token") == "it looked like a GitHub token"
    assert refusal_words("credential:<script>") == "it looked like a password, key or token"
    assert refusal_words("memory_off") == "memory is off"
    assert refusal_words("agent_blocked").startswith("the person does not allow this client")
    assert "DROP TABLE" not in refusal_words("DROP TABLE x")
    assert describe_shape("") == "a password, key or token"
