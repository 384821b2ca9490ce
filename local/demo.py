"""`make demo`: the product's promise shown end to end against a fresh local stack, over real HTTP and SigV4.

The stack is `make run`'s own launcher (`python -m local.run`) in a subprocess on a free port, so the
demo exercises exactly what a developer runs. The host and the worker sign through the SDK with the
keys the launcher writes; users sign in with `POST /dev/token`. Each step prints one line,
`✓ description` or `✗ description: what differed`, and any ✗ makes the exit status non-zero.
Failure messages give statuses, counts and ids, never memory text.
"""

from __future__ import annotations

import importlib.util
import io
import json
import secrets
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn, TextIO

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "sdk") not in sys.path:  # the SDK lives beside the app and is not installed
    sys.path.insert(0, str(ROOT / "sdk"))

from botocore.auth import SigV4Auth  # noqa: E402
from botocore.awsrequest import AWSRequest  # noqa: E402
from botocore.credentials import Credentials  # noqa: E402
from personal_memory_sdk import (  # noqa: E402
    AgentContext,
    AgentMemory,
    CallerCredentials,
    HostClient,
    MemorySdkError,
    ProposeEvent,
    WorkerClient,
    load_credentials_file,
)

from local.demo_connection import ConnectionStory  # noqa: E402
from local.demo_mcp import McpStory  # noqa: E402
from local.demo_steps import NEW_ENTRY_TEXT, PUMP_WAIT_SECONDS, Step, StepFailed  # noqa: E402
from local.demo_steps import expect as _expect  # noqa: E402
from local.demo_steps import http as _http  # noqa: E402
from local.process import LocalProcess, start_local_stack  # noqa: E402

AGENT_DIR = ROOT / "examples" / "memory-agent"
ENTRY_TEXT = "Uses metric units"
RECEIPT_ENTRY_TEXT = "Keeps the spare key with a neighbour"
KEY_CREATED, KEY_DESTROYED = "keep.memory.key_created", "keep.memory.key_destroyed"
# What a keep.memory.context journal row may hold: who read the memory and how many entries, never text.
CONTEXT_ROW_FIELDS = frozenset({"at", "action", "session_id", "agent", "count"})

__all__ = ["LocalProcess", "Step", "StepFailed", "Story", "main", "run_steps", "start_local_stack"]


def run_steps(steps: Sequence[Step], out: TextIO) -> int:
    """Run every step (a failure does not hide the later ones), print one line each; 0 only if all held."""
    failed = 0
    for step in steps:
        try:
            step.check()
        except StepFailed as exc:
            failed += 1
            print(f"✗ {step.description}: {exc}", file=out, flush=True)
        except MemorySdkError as exc:  # carries status, code, method and path only
            failed += 1
            print(f"✗ {step.description}: {exc}", file=out, flush=True)
        except Exception as exc:  # noqa: BLE001 - a demo reports, it does not crash mid-story
            failed += 1
            print(f"✗ {step.description}: unexpected {type(exc).__name__}", file=out, flush=True)
        else:
            print(f"✓ {step.description}", file=out, flush=True)
    print(f"demo: {len(steps) - failed} of {len(steps)} steps held", file=out, flush=True)
    return 1 if failed else 0


# ---- the story ---------------------------------------------------------------------------------


def _signed_get(url: str, keys: CallerCredentials) -> tuple[int, str]:
    """A GET signed with botocore's SigV4 (as the SDK signs), for when the raw body itself is what is checked."""
    request = AWSRequest(method="GET", url=url, headers={"Accept": "application/json"})
    credentials = Credentials(keys.access_key_id, keys.secret_access_key, keys.session_token)
    SigV4Auth(credentials, "execute-api", "us-east-1").add_auth(request)
    prepared = request.prepare()
    return _http(prepared.url, "GET", dict(prepared.headers.items()))


def _load_example_agent() -> ModuleType:
    """examples/memory-agent/agent.py, whose `run(ctx)` is the pack's entrypoint (the folder name has a dash)."""
    spec = importlib.util.spec_from_file_location("memory_agent_example", AGENT_DIR / "agent.py")
    if spec is None or spec.loader is None:
        raise RuntimeError("cannot load examples/memory-agent/agent.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _RecordingWorker:
    """Passes the agent's posts to the real worker client and remembers their ids and acceptance."""

    def __init__(self, worker: WorkerClient) -> None:
        self.worker = worker
        self.event_ids: list[str] = []
        self.accepted = 0

    def post_events(self, session_id: str, events: Sequence[ProposeEvent]) -> int:
        accepted = self.worker.post_events(session_id, events)
        self.accepted += accepted
        self.event_ids.extend(event.id for event in events)
        return accepted


class Story:
    """The demo's steps against one running stack. `users` exist so tests can run it twice on one stack."""

    def __init__(self, base_url: str, credentials_file: Path, users: tuple[str, str] = ("alice", "bob")) -> None:
        self.url = base_url
        self.credentials_file = credentials_file
        self.host = HostClient.from_credentials_file(base_url, credentials_file)
        self.worker = WorkerClient.from_credentials_file(base_url, credentials_file)
        self.worker_keys = load_credentials_file(credentials_file, "worker")
        self.alice, self.bob = users
        self.pack: dict[str, Any] = json.loads((AGENT_DIR / "pack.json").read_text())
        self.agent = _load_example_agent()
        self.proposal_text: str = self.agent.NOTICED_TEXT
        self.run_id = secrets.token_hex(4)  # session ids never collide with an earlier run's
        self.sessions = 0
        self.tokens: dict[str, str] = {}
        self.state: dict[str, Any] = {}
        self.given: Counter[tuple[str, int]] = Counter()  # (session, count) of each context that gave items

    def steps(self) -> list[Step]:
        a, b = self.alice, self.bob
        return [
            Step(f"{a} signs in (POST /dev/token); her memory is off and empty", self.alice_signs_in),
            Step(
                f"the host registers a session for {a} with the memory-agent manifest (memory: true)",
                self.host_registers,
            ),
            Step("the agent is given nothing while her memory is off", self.agent_given_nothing),
            Step(f"{a} turns memory on and adds an entry", self.alice_turns_memory_on),
            Step("a new session's context gives the entry exactly once", self.context_gives_entry_once),
            Step("the example agent's run(ctx) proposes one entry through the worker route", self.agent_proposes),
            Step(
                f"the stream pump turns it into a waiting proposal within {PUMP_WAIT_SECONDS:.0f} s", self.pump_handles
            ),
            Step(
                "the session's stored events hold neither the entry's nor the proposal's text", self.events_hold_no_text
            ),
            Step("the proposal waits in GET /v1/memory and GET /v1/inbox", self.proposal_waits),
            Step("the waiting proposal is in no context", self.proposal_in_no_context),
            Step(f"{a} accepts it; a new session's context includes it", self.accept_then_included),
            Step(f"{b} signs in and turns memory on; his GET /v1/memory is empty", self.bob_is_empty),
            Step(f"{a}'s entry is a 404 for {b} on PATCH, DELETE and accept, and stays untouched", self.bob_gets_404),
            Step(f"a session for {b} gets an empty context", self.bob_session_empty),
            Step("a session whose manifest says memory: false gets nothing", self.manifest_false_gets_nothing),
            Step("a session with no user gets nothing", self.no_user_gets_nothing),
            Step(f"{a} turns memory off; a new session's context is empty again", self.alice_turns_memory_off),
            Step(f"{a}'s entries are kept while memory is off", self.entries_kept),
            Step(f"{a}'s journal shows keep.memory.context rows with counts and no text", self.journal_has_counts_only),
            Step(
                f"{a} forgets everything: both entries go and her data key is destroyed (journaled, no key material)",
                self.forget_all_destroys_the_key,
            ),
            Step(
                f"{a}'s next entry is sealed under a new key; nothing of the old memory comes back",
                self.new_key_after_forgetting,
            ),
            Step(
                f"{a} forgets one entry: its own key goes with it, and her journal gives a receipt "
                "(forgotten at … · unrecoverable everywhere by …)",
                self.forget_one_gives_a_receipt,
            ),
            *McpStory(self).steps(),  # the same promise through an MCP client (local/demo_mcp.py)
            *ConnectionStory(
                self
            ).steps(),  # a person's own client by its connection, no role (local/demo_connection.py)
        ]

    # -- helpers

    def _need(self, key: str) -> Any:
        if key not in self.state:
            raise StepFailed(f"needs the {key.replace('_', ' ')} from an earlier step")
        return self.state[key]

    def _user(self, user: str, method: str, path: str, body: Any = None) -> tuple[int, Any, str]:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self.tokens[user]}"}
        status, raw = _http(self.url + path, method, headers, None if body is None else json.dumps(body).encode())
        return status, (json.loads(raw) if raw.strip() else None), raw

    def _sign_in(self, user: str) -> None:
        body = json.dumps({"user_id": user}).encode()
        status, raw = _http(self.url + "/dev/token", "POST", {"Content-Type": "application/json"}, body)
        _expect(status, 200, "POST /dev/token")
        self.tokens[user] = json.loads(raw)["token"]

    def _view(self, user: str) -> dict[str, Any]:
        status, view, _ = self._user(user, "GET", "/v1/memory")
        _expect(status, 200, "GET /v1/memory")
        return dict(view)

    def _set_enabled(self, user: str, enabled: bool) -> None:
        status, body, _ = self._user(user, "PUT", "/v1/memory/settings", {"enabled": enabled})
        _expect(status, 200, "PUT /v1/memory/settings")
        if body.get("enabled") is not enabled:
            raise StepFailed(f"the settings answer says enabled={body.get('enabled')}")

    def _new_session(self, user: str | None, memory: bool) -> str:
        self.sessions += 1
        session_id = f"demo-{self.run_id}-{self.sessions}"
        session = self.host.register_session(session_id, user_id=user, agent=self.pack["name"], memory=memory)
        if session.user_id != user or session.memory is not memory:
            raise StepFailed("the registered session does not carry the user and manifest it was given")
        return session_id

    def _context(self, session_id: str) -> list[str]:
        texts = [item.text for item in self.host.fetch_context(session_id)]
        if texts:
            self.given[(session_id, len(texts))] += 1
        return texts

    def _empty_context(self, user: str | None, memory: bool) -> None:
        texts = self._context(self._new_session(user, memory))
        if texts:
            raise StepFailed(f"the context gave {len(texts)} items, expected none")

    # -- 1: memory off

    def alice_signs_in(self) -> None:
        self._sign_in(self.alice)
        view = self._view(self.alice)
        if view["enabled"] is not False:
            raise StepFailed("memory is on")
        if view["items"] or view["proposals"]:
            held = f"{len(view['items'])} entries and {len(view['proposals'])} proposals"
            raise StepFailed(f"the account already holds {held}")

    def host_registers(self) -> None:
        if self.pack["manifest"].get("memory") is not True:
            raise StepFailed("examples/memory-agent/pack.json does not set memory: true")
        self.state["first_session"] = self._new_session(self.alice, self.pack["manifest"]["memory"])

    def agent_given_nothing(self) -> None:
        texts = self._context(self._need("first_session"))
        if texts:
            raise StepFailed(f"the context gave {len(texts)} items while memory is off")

    # -- 2: memory on, the entry given once, the agent proposes, no text stays in events

    def alice_turns_memory_on(self) -> None:
        self._set_enabled(self.alice, True)
        status, entry, _ = self._user(self.alice, "POST", "/v1/memory", {"text": ENTRY_TEXT, "kind": "preference"})
        _expect(status, 201, "POST /v1/memory")
        self.state["entry_id"] = entry["id"]

    def context_gives_entry_once(self) -> None:
        session_id = self._new_session(self.alice, True)
        texts = self._context(session_id)
        if len(texts) != 1 or texts.count(ENTRY_TEXT) != 1:
            raise StepFailed(f"the context gave {len(texts)} items, the entry {texts.count(ENTRY_TEXT)} times")
        self.state["agent_session"] = session_id

    def agent_proposes(self) -> None:
        session_id = self._need("agent_session")
        items = self.host.fetch_context(session_id)
        self.given[(session_id, len(items))] += 1
        recorder = _RecordingWorker(self.worker)
        prompt = self.agent.run(AgentContext(session_id, AgentMemory(items, session_id, recorder)))
        if ENTRY_TEXT not in prompt:
            raise StepFailed("the agent's prompt does not hold the entry it was given")
        if len(recorder.event_ids) != 1 or recorder.accepted != 1:
            posted = f"{len(recorder.event_ids)} events ({recorder.accepted} accepted)"
            raise StepFailed(f"the agent posted {posted}, expected one")
        self.state["event_id"] = recorder.event_ids[0]

    def pump_handles(self) -> None:
        session_id, event_id = self._need("agent_session"), self._need("event_id")
        deadline = time.monotonic() + PUMP_WAIT_SECONDS
        while True:
            ours = [event for event in self.worker.list_events(session_id) if event.id == event_id]
            if ours and ours[0].handled or time.monotonic() >= deadline:
                break
            time.sleep(0.2)
        if not ours or not ours[0].handled:
            raise StepFailed(f"not handled within {PUMP_WAIT_SECONDS:.0f} s ({len(ours)} matching events)")
        outcome = ours[0].outcome
        if outcome is None or outcome.type != "memory.proposed" or not outcome.proposal_id:
            raise StepFailed(f"outcome {outcome.type if outcome else None} ({outcome.reason if outcome else None})")
        self.state["proposal_id"] = outcome.proposal_id

    def events_hold_no_text(self) -> None:
        """Read as raw JSON (signed here with botocore and the worker's keys) so no parsing can hide a field."""
        session_id, event_id = self._need("agent_session"), self._need("event_id")
        status, raw = _signed_get(self.url + f"/v1/sessions/{session_id}/events", self.worker_keys)
        _expect(status, 200, "GET /v1/sessions/{id}/events")
        if event_id not in raw:
            raise StepFailed("the agent's event is not among the session's events")
        held = [name for name, text in (("entry", ENTRY_TEXT), ("proposal", self.proposal_text)) if text in raw]
        if held:
            raise StepFailed(f"the stored events hold the {' and '.join(held)} text")

    # -- 3: the proposal waits for the user

    def proposal_waits(self) -> None:
        proposal_id, session_id = self._need("proposal_id"), self._need("agent_session")
        view = self._view(self.alice)
        waiting = [p for p in view["proposals"] if p["id"] == proposal_id]
        if len(waiting) != 1 or waiting[0]["text"] != self.proposal_text or waiting[0]["origin"] != "agent":
            raise StepFailed(f"GET /v1/memory lists {len(waiting)} matching agent proposals, expected one")
        if waiting[0].get("source", {}).get("session_id") != session_id:
            raise StepFailed("the proposal's source does not name the agent's session")
        if any(item["id"] == proposal_id for item in view["items"]):
            raise StepFailed("the proposal is already an active entry")
        status, inbox, _ = self._user(self.alice, "GET", "/v1/inbox")
        _expect(status, 200, "GET /v1/inbox")
        if [p["id"] for p in inbox["memory_proposals"]].count(proposal_id) != 1:
            raise StepFailed("GET /v1/inbox does not list the proposal once")

    def proposal_in_no_context(self) -> None:
        self._need("proposal_id")  # without a proposal, "not in any context" would hold vacuously
        for session_id in (self._need("agent_session"), self._new_session(self.alice, True)):
            texts = self._context(session_id)
            if self.proposal_text in texts:
                raise StepFailed("a context gave the proposal before it was accepted")
            if texts != [ENTRY_TEXT]:
                raise StepFailed(f"a context gave {len(texts)} items, expected only the entry")

    def accept_then_included(self) -> None:
        status, _, _ = self._user(self.alice, "POST", f"/v1/memory/{self._need('proposal_id')}/accept")
        _expect(status, 201, "POST /v1/memory/{id}/accept")
        texts = self._context(self._new_session(self.alice, True))
        if sorted(texts) != sorted([ENTRY_TEXT, self.proposal_text]):
            times = texts.count(self.proposal_text)
            raise StepFailed(f"the context gave {len(texts)} items, the accepted proposal {times} times")
        if self._view(self.alice)["proposals"]:
            raise StepFailed("a proposal still waits after the accept")

    # -- 4: another user gets none of it

    def bob_is_empty(self) -> None:
        self._sign_in(self.bob)
        self._set_enabled(self.bob, True)  # so only the isolation between users can keep him empty
        view = self._view(self.bob)
        if view["items"] or view["proposals"]:
            raise StepFailed(f"he sees {len(view['items'])} entries and {len(view['proposals'])} proposals")

    def bob_gets_404(self) -> None:
        entry_id = self._need("entry_id")
        for method, path, body in (
            ("PATCH", f"/v1/memory/{entry_id}", {"pinned": True}),
            ("DELETE", f"/v1/memory/{entry_id}", None),
            ("POST", f"/v1/memory/{entry_id}/accept", None),
        ):
            status, answer, _ = self._user(self.bob, method, path, body)
            _expect(status, 404, f"{method} {path.replace(entry_id, '{id}')}")
            if not isinstance(answer, dict) or answer.get("code") != "not_found":
                raise StepFailed(f"{method} answered without the not_found code")
        mine = [item for item in self._view(self.alice)["items"] if item["id"] == entry_id]
        if len(mine) != 1 or mine[0]["text"] != ENTRY_TEXT or mine[0]["pinned"] is not False:
            raise StepFailed(f"{self.alice}'s entry changed")

    def bob_session_empty(self) -> None:
        self._empty_context(self.bob, True)

    # -- 5: the other gates

    def manifest_false_gets_nothing(self) -> None:
        self._empty_context(self.alice, False)

    def no_user_gets_nothing(self) -> None:
        self._empty_context(None, True)

    # -- 6: off stops use and keeps the entries

    def alice_turns_memory_off(self) -> None:
        self._set_enabled(self.alice, False)
        self._empty_context(self.alice, True)

    def entries_kept(self) -> None:
        view = self._view(self.alice)
        texts = sorted(item["text"] for item in view["items"])
        if view["enabled"] is not False or texts != sorted([ENTRY_TEXT, self.proposal_text]):
            raise StepFailed(f"GET /v1/memory says enabled={view['enabled']} with {len(texts)} entries, expected 2")

    # -- 7: the journal

    def journal_has_counts_only(self) -> None:
        status, page, raw = self._user(self.alice, "GET", "/v1/memory/journal?limit=100")
        _expect(status, 200, "GET /v1/memory/journal")
        rows = [row for row in page["items"] if row.get("action") == "keep.memory.context"]
        if not rows:
            raise StepFailed("no keep.memory.context rows")
        if any(not isinstance(row.get("count"), int) or set(row) - CONTEXT_ROW_FIELDS for row in rows):
            raise StepFailed("a keep.memory.context row lacks a count or holds more than session, agent and count")
        journaled = Counter((row.get("session_id"), row["count"]) for row in rows)
        missing = self.given - journaled
        if missing:
            unjournaled = f"{sum(missing.values())} of {sum(self.given.values())}"
            raise StepFailed(f"{unjournaled} contexts that gave items are not journaled with their count")
        if ENTRY_TEXT in raw or self.proposal_text in raw:
            raise StepFailed("the journal holds memory text")

    # -- 8: forgetting everything destroys the key (crypto-shredding, docs/encryption.md)

    def _journal_actions(self, user: str) -> tuple[list[str], str]:
        status, page, raw = self._user(user, "GET", "/v1/memory/journal?limit=100")
        _expect(status, 200, "GET /v1/memory/journal")
        return [row["action"] for row in page["items"]], raw

    def forget_all_destroys_the_key(self) -> None:
        self._set_enabled(self.alice, True)
        status, body, _ = self._user(self.alice, "DELETE", "/v1/memory")
        _expect(status, 200, "DELETE /v1/memory")
        if body != {"deleted": 2}:
            raise StepFailed(f"DELETE /v1/memory answered {body}, expected 2 deleted")
        actions, raw = self._journal_actions(self.alice)
        if actions.count(KEY_DESTROYED) != 1 or actions.count(KEY_CREATED) != 1:
            created, destroyed = actions.count(KEY_CREATED), actions.count(KEY_DESTROYED)
            raise StepFailed(
                f"the journal shows {created} key creations and {destroyed} destructions, expected 1 and 1"
            )
        if any(word in raw for word in ("wrapped", "key_id", "plaintext")):
            raise StepFailed("a journal row names key material")
        view = self._view(self.alice)
        if view["items"] or view["proposals"]:
            raise StepFailed(f"{len(view['items'])} entries and {len(view['proposals'])} proposals are left")

    def forget_one_gives_a_receipt(self) -> None:
        self._set_enabled(self.alice, True)
        status, entry, _ = self._user(self.alice, "POST", "/v1/memory", {"text": RECEIPT_ENTRY_TEXT})
        _expect(status, 201, "POST /v1/memory")
        status, _, _ = self._user(self.alice, "DELETE", f"/v1/memory/{entry['id']}")
        _expect(status, 204, "DELETE /v1/memory/{id}")
        status, page, raw = self._user(self.alice, "GET", "/v1/memory/journal?limit=100")
        _expect(status, 200, "GET /v1/memory/journal")
        receipts = [row for row in page["items"] if row["action"] == "keep.memory.forget"]
        if len(receipts) != 1 or not receipts[0].get("unrecoverable_by"):
            raise StepFailed(f"expected one keep.memory.forget row with unrecoverable_by, found {receipts}")
        if RECEIPT_ENTRY_TEXT in raw or entry["id"] in raw.split("keep.memory.forget", 1)[-1][:200]:
            raise StepFailed("the receipt names the entry's text or id")
        if any(item["id"] == entry["id"] for item in self._view(self.alice)["items"]):
            raise StepFailed("the forgotten entry is still listed")
        row = receipts[0]
        print(
            f"    receipt: forgotten at {row['at'][11:16]} UTC · unrecoverable everywhere by {row['unrecoverable_by'][11:16]} UTC",
            flush=True,
        )
        self._set_enabled(self.alice, False)  # left as the story's earlier steps left it: off

    def new_key_after_forgetting(self) -> None:
        status, _, _ = self._user(self.alice, "POST", "/v1/memory", {"text": NEW_ENTRY_TEXT})
        _expect(status, 201, "POST /v1/memory")
        actions, _ = self._journal_actions(self.alice)
        if actions[: actions.index(KEY_DESTROYED)].count(KEY_CREATED) != 1:
            raise StepFailed("no new key was created after the old one was destroyed")
        texts = [item["text"] for item in self._view(self.alice)["items"]]
        if texts != [NEW_ENTRY_TEXT]:
            raise StepFailed(f"GET /v1/memory lists {len(texts)} entries, expected only the new one")
        self._set_enabled(self.alice, False)  # left as the story's earlier steps left it: off


def _stop_on_sigterm(*_: object) -> NoReturn:
    raise SystemExit(143)  # unwinds through `finally`, so the stack is stopped


def main(argv: Sequence[str] | None = None, out: TextIO = sys.stdout) -> int:
    del argv  # no options: the demo always runs the same story on a fresh stack
    if isinstance(out, io.TextIOWrapper):  # ✓/✗ must print even where the locale is not UTF-8
        out.reconfigure(encoding="utf-8")
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    with tempfile.TemporaryDirectory(prefix="memory-demo-") as workdir:
        try:
            stack = start_local_stack(Path(workdir))
        except RuntimeError as exc:
            print(f"✗ a fresh local stack starts: {exc}", file=out, flush=True)
            return 1
        try:
            print(f"demo: fresh local stack at {stack.url}", file=out, flush=True)
            return run_steps(Story(stack.url, stack.credentials_file).steps(), out)
        finally:
            stack.stop()


if __name__ == "__main__":
    sys.exit(main())
