"""Vendor tokens that announce themselves by a literal prefix: ghp_, sk-, xoxb-, AIza, SG., hvs., ya29....

Each rule is the prefix then a bounded body; a candidate counts when its random part looks
generated, so 'ghp_xxxx...' placeholders and identifiers such as 'hf_AutoModelFor...' pass.
"""

from __future__ import annotations

import re

from chalicelib.credentials.checks import b64_decode, is_wordy, looks_random

_T = "A-Za-z0-9_\\-"


def _tok(head: str, body: str, width: int = 0, left: str = _T, right: str = _T) -> re.Pattern[str]:
    """``HEAD(?<![..]HEAD)BODY``: the left boundary is checked after the literal head so the
    regex keeps its fast literal-prefix search and ``ghp_ghp_ghp_...`` gives one candidate."""
    behind = f"(?<![{left}].{{{width}}})" if width else ""
    return re.compile(f"{head}{behind}{body}(?![{right}])")


# (shape, a piece every match contains, pattern, characters that may not touch the token on the left)
_TOKENS: tuple[tuple[str, str, re.Pattern[str], str], ...] = (
    ("anthropic_api_key", "sk-ant-", _tok("sk-ant-", r"[a-z]{2,8}[0-9]{2}-(?P<b>[A-Za-z0-9_\-]{32,250}+)", 7), _T),
    (
        "openai_api_key",
        "sk-",
        _tok("sk-", r"(?P<p>(?:proj|svcacct|admin|None)-)?(?P<b>[A-Za-z0-9_\-]{20,250}+)", 3),
        _T,
    ),
    ("github_token", "_", _tok("gh[pousr]_", r"(?P<b>[A-Za-z0-9]{36,251}+)", 4), _T),
    ("github_token", "github_pat_", _tok("github_pat_", r"(?P<b>[A-Za-z0-9]{22})_(?P<c>[A-Za-z0-9]{59})", 11), _T),
    (
        "gitlab_token",
        "gl",
        _tok("gl(?:pat|dt|rt|rtr|ptt|oas|cbt|ft|soat|imt|agent)-", r"(?P<b>[A-Za-z0-9_\-]{20,80}+)"),
        _T,
    ),
    (
        "slack_webhook",
        "hooks.slack.com/",
        _tok(r"hooks\.slack\.com/(?:services|workflows|triggers)/", r"(?P<path>[A-Za-z0-9_/\-]{20,200}+)"),
        "",
    ),
    ("slack_token", "xox", _tok("xox[abposre]-", r"(?P<path>[A-Za-z0-9\-]{10,250}+)", 5), _T),
    ("slack_token", "xapp-", _tok("xapp-", r"(?P<path>[A-Za-z0-9\-]{30,250}+)", 5), _T),
    ("stripe_secret_key", "k_", _tok("[sr]k_(?:live|test)_", r"(?P<b>[A-Za-z0-9]{20,247}+)", 8), _T),
    ("google_api_key", "AIza", _tok("AIza", r"(?P<b>[A-Za-z0-9_\-]{35})", 4), _T),
    ("huggingface_token", "hf_", _tok("hf_", r"(?P<b>[A-Za-z0-9]{30,40}+)", 3), _T),
    ("npm_token", "npm_", _tok("npm_", r"(?P<b>[A-Za-z0-9]{36})", 4), _T),
    ("pypi_token", "pypi-AgE", _tok("pypi-AgE", r"(?P<b>[A-Za-z0-9_\-]{50,400}+)", 8), _T),
    ("twilio_key", "SK", _tok("SK", r"(?P<b>[0-9a-fA-F]{32})", right="A-Za-z0-9"), "A-Za-z0-9"),
    ("sendgrid_key", "SG.", _tok(r"SG\.", r"(?P<b>[A-Za-z0-9_\-]{22})\.(?P<c>[A-Za-z0-9_\-]{43})", 3), _T),
    ("mailgun_key", "key-", _tok("key-", r"(?P<b>[0-9a-f]{32})", right="A-Za-z0-9"), "A-Za-z0-9"),
    # the newer Mailgun key, <32 hex>-<8 hex>-<8 hex>, found from its first dash
    (
        "mailgun_key",
        "-",
        re.compile(r"-(?<=(?<![A-Za-z0-9_\-])(?P<b>[0-9a-f]{32})-)[0-9a-f]{8}-[0-9a-f]{8}(?![A-Za-z0-9_\-])"),
        "",
    ),
    (
        "discord_bot_token",
        ".",
        _tok(
            "[MNO]",
            r"(?P<id>[A-Za-z0-9_\-]{22,26}+)\.[A-Za-z0-9_\-]{6}"
            r"\.(?P<c>[A-Za-z0-9_\-]{27,38}+)",
            1,
        ),
        _T,
    ),
    # <bot id>:<35 characters>, found from its colon
    ("telegram_bot_token", ":", re.compile(r":(?<=[0-9]{5}:)(?P<b>[A-Za-z0-9_\-]{35})(?![A-Za-z0-9_\-])"), ""),
    ("shopify_token", "shp", _tok("shp(?:at|ca|pa|ss)_", r"(?P<b>[a-fA-F0-9]{32})", 6), _T),
    ("digitalocean_token", "_v1_", _tok("do[opr]_v1_", r"(?P<b>[a-f0-9]{64})", 7), _T),
    ("heroku_api_key", "HRKU-", _tok("HRKU-", r"(?P<b>[A-Za-z0-9_\-]{40,80}+)", 5), _T),
    ("vault_token", "hv", _tok(r"hv[sbr]\.", r"(?P<b>[A-Za-z0-9_\-]{24,250}+)", 4), _T),
    # Vault before 1.10: a service token is 's.' and 24 base62 characters (gitleaks' vault-service-token), a
    # batch token 'b.' and its base64url body, which starts 'AAAAAQ' (detect-secrets: '[brs]\.' and 24 or more)
    ("vault_token", "s.", _tok(r"s\.", r"(?P<v>[A-Za-z0-9]{24})", 2, left=_T + "./", right=_T + "."), _T + "./"),
    ("vault_token", "b.AAAAAQ", _tok(r"b\.AAAAAQ", r"(?P<b>[A-Za-z0-9_\-]{24,400}+)", 8, left=_T + "./"), _T + "./"),
    ("gcp_oauth_token", "ya29.", _tok(r"ya29\.", r"(?P<b>[A-Za-z0-9_\-]{30,2048}+)", 5), _T),
    # Mailchimp: <32 hex>-<datacenter>, found from its '-us'
    (
        "mailchimp_key",
        "-us",
        re.compile(r"-us(?<=(?<![A-Za-z0-9_\-])(?P<b>[0-9a-f]{32})-us)[0-9]{1,2}(?![A-Za-z0-9_\-])"),
        "",
    ),
    # This service's own connection tokens (chalicelib/auth/connection_tokens.py): known by their checksum.
    ("memory_connection_token", "pmc_", _tok("pmc_", r"(?P<t>[A-Za-z0-9_\-]{43}[0-9a-f]{8})", 4), _T),
    ("private_key", "AGE-SECRET-KEY-1", _tok("AGE-SECRET-KEY-1", r"(?P<b>[0-9A-Z]{58})", 16), _T),
)


# Prefixes that also start ordinary identifiers: hf_AutoModelFor..., npm_config_..., sk-spinner-...
_WORDY_PREFIXES = frozenset({"huggingface_token", "npm_token", "openai_api_key", "slack_token"})


_LEFT_SETS = {left: frozenset(re.findall(f"[{left}]", "".join(map(chr, range(128))))) for *_, left in _TOKENS if left}

_PATH_PARTS = re.compile(r"[-/]")


def _token_ok(shape: str, m: re.Match[str], text: str, left: str) -> bool:
    if left and m.start() and text[m.start() - 1] in _LEFT_SETS[left]:
        return False
    g = m.groupdict()
    if "path" in g:  # Slack: numeric ids, then one long random part ('xoxo-see-you' is not one)
        parts = [p for p in _PATH_PARTS.split(g["path"]) if p]
        longest = max(parts, key=len)
        return (
            len(parts) >= 2
            and len(longest) >= 16
            and any(c.isdigit() for c in g["path"])
            and looks_random(longest, classes=1)
            and not is_wordy(longest)
        )
    if shape == "telegram_bot_token":  # 5 to 12 digits of bot id before the colon
        digits = len(text[max(0, m.start() - 13) : m.start()]) - len(
            text[max(0, m.start() - 13) : m.start()].rstrip("0123456789")
        )
        if digits > 12:
            return False
    if shape == "discord_bot_token":  # the first part is a base64 numeric user id
        raw = b64_decode(m.group(0).split(".")[0])
        if not raw or not raw.isdigit() or not 15 <= len(raw) <= 21:
            return False
    if shape == "memory_connection_token":
        from chalicelib.auth.connection_tokens import is_well_formed

        return is_well_formed(m.group(0))
    if shape == "openai_api_key":
        if g["b"].startswith("ant-") or (not g["p"] and len(g["b"]) < 32) or is_wordy(g["b"]):
            return False
    if "v" in g:  # a legacy Vault service token: random base62 with digits, not 's.' before a word or a name
        return looks_random(g["v"], classes=2) and any(c.isdigit() for c in g["v"]) and not is_wordy(g["v"])
    classes = 1 if shape in ("mailgun_key", "mailchimp_key", "twilio_key", "private_key") else 2
    wordy = shape in _WORDY_PREFIXES and any(is_wordy(v) for k, v in g.items() if k in "bc" and v)
    return not wordy and all(looks_random(v, classes=classes) for k, v in g.items() if k in "bc" and v)


def find_token(text: str, low: str) -> str | None:
    """The shape of the first prefixed vendor token in ``text`` whose body looks generated."""
    for shape, piece, pattern, left in _TOKENS:
        if piece not in text:
            continue
        for m in pattern.finditer(text):
            if _token_ok(shape, m, text, left):
                return shape
    return None
