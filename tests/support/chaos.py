"""A seeded, scripted workload over the real HTTP server while a share of DynamoDB calls fail; `make chaos` runs it.

`python -m tests.support.chaos --seed 7 --n 300` starts the local stack in this process (DynamoDB Local, moto's KMS, tables,
stream pump, the threaded HTTP server) with MEMORY_FAULT_RATE/SEED set, then drives it over HTTP:
users add, edit, forget, switch, accept and reject; hosts register sessions and mark them
untrusted; workers propose; operators read and forget. Each worker thread owns its users, so what a
2xx confirmed is known exactly. Afterwards tests/support/chaos_checks.py reads the raw tables and
the captured logs and checks the invariants. Prints one JSON report; exit 1 if anything failed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.chaos_io import Backoff, Call, Http, Tee


@dataclass
class UserModel:
    """What the server confirmed for one user: the entries a 2xx said exist, and their text."""

    user: str
    enabled: bool = False
    entries: dict[str, str] = field(default_factory=dict)
    sessions: list[str] = field(default_factory=list)
    events: dict[str, list[str]] = field(default_factory=dict)  # session -> event ids posted (202)
    decided: set[str] = field(default_factory=set)  # proposal ids accepted or rejected (2xx)
    forgot_all: int = 0
    # Entries a forget-all that never answered 200 may have taken: it destroys the user's key first
    # (issue 12), so their text is gone whether or not their items are deleted yet.
    maybe_forgotten: set[str] = field(default_factory=set)


class Worker:
    """One thread of the workload: its own users, sessions and seeded choices."""

    def __init__(self, http: Http, seed: int, index: int, users: int, pump: Any = None) -> None:
        self.http, self.rng, self.tag = http, random.Random(seed * 1000 + index), f"s{seed}w{index}"
        self.pump = pump  # sequential runs drive the stream pump themselves, so a seed replays exactly
        self.models = [UserModel(f"chaos-{self.tag}-u{n}") for n in range(users)]
        self.texts: list[str] = []  # every text we sent, to look for in logs and the journal
        self.errors: list[str] = []  # the workload's own crashes: each one fails the run
        self._n = 0

    def text(self) -> str:
        self._n += 1
        made = f"chaos text {self.tag}-{self._n} {self.rng.choice(['tea', 'cats', 'rust', 'maps'])}"
        self.texts.append(made)
        return made

    def run(self, steps: int) -> None:
        try:
            self._run(steps)
        except Exception as exc:  # noqa: BLE001 - reported as a violation, never swallowed
            import traceback

            self.errors.append("".join(traceback.format_exception(exc))[-1500:])

    def _run(self, steps: int) -> None:
        for model in self.models:
            self._switch(model, True)
        actions = [
            (self._add, 22),
            (self._edit, 8),
            (self._forget, 6),
            (self._view, 8),
            (self._accept, 8),
            (self._reject, 4),
            (self._register, 6),
            (self._untrusted, 2),
            (self._propose, 14),
            (self._context, 5),
            (self._switch_random, 3),
            (self._operator_read, 3),
            (self._operator_forget, 2),
            (self._forget_all, 1),
            (self._operator_forget_all, 1),
        ]
        choices, weights = zip(*actions, strict=True)
        for _ in range(steps):
            self.rng.choices(choices, weights)[0](self.rng.choice(self.models))

    # ---- users ----
    def _switch(self, m: UserModel, enabled: bool) -> None:
        call = self.http.user("PUT", "/v1/memory/settings", "/v1/memory/settings", m.user, {"enabled": enabled})
        if call.status == 200:
            m.enabled = enabled

    def _switch_random(self, m: UserModel) -> None:
        self._switch(m, self.rng.random() < 0.7)

    def _add(self, m: UserModel) -> None:
        body: dict[str, Any] = {"text": self.text(), "kind": self.rng.choice(["note", "fact", "preference"])}
        if self.rng.random() < 0.2:
            body["pinned"] = True
        call = self.http.user("POST", "/v1/memory", "/v1/memory", m.user, body)
        if call.status == 201:
            m.entries[call.body["id"]] = body["text"]

    def _edit(self, m: UserModel) -> None:
        if not m.entries:
            return
        entry = self.rng.choice(sorted(m.entries))
        body = {"text": self.text(), "pinned": self.rng.random() < 0.5}
        call = self.http.user("PATCH", f"/v1/memory/{entry}", "/v1/memory/{id}", m.user, body)
        if call.status == 200:
            m.entries[entry] = body["text"]

    def _forget(self, m: UserModel) -> None:
        if m.entries:
            entry = self.rng.choice(sorted(m.entries))
            if self.http.user("DELETE", f"/v1/memory/{entry}", "/v1/memory/{id}", m.user).status == 204:
                del m.entries[entry]

    def _forget_all(self, m: UserModel) -> None:
        self._forget_everything(m, lambda: self.http.user("DELETE", "/v1/memory", "/v1/memory", m.user))

    def _forget_everything(self, m: UserModel, send: Callable[[], Call]) -> None:
        """Run a forget-all again until it answers 200 (it converges), six times at most.

        Any try may have destroyed the key before a 503 (its body then says `deleted`), so even when
        none answered 200 the entries are forgotten for the model: their text is gone, their items
        may still be stored. Proposals handled later may still arrive: the checks allow for those."""
        for _ in range(6):
            if send().status == 200:
                break
        else:
            m.maybe_forgotten.update(m.entries)
        m.entries.clear()
        m.forgot_all += 1

    def _view(self, m: UserModel) -> None:
        path = self.rng.choice(["/v1/memory", "/v1/inbox"])
        self.http.user("GET", path, path, m.user)

    def _waiting(self, m: UserModel) -> set[str]:
        """The user's waiting proposals as their inbox shows them (proposal ids are random, never derived
        from the event), minus those decided; nothing when the inbox read is refused."""
        call = self.http.user("GET", "/v1/inbox", "/v1/inbox", m.user)
        if call.status != 200:
            return set()
        return {p["id"] for p in call.body["memory_proposals"]} - m.decided

    def _decide(self, m: UserModel, verb: str) -> None:
        waiting = sorted(self._waiting(m))
        if not waiting:
            return
        proposal = self.rng.choice(waiting)
        call = self.http.user("POST", f"/v1/memory/{proposal}/{verb}", f"/v1/memory/{{id}}/{verb}", m.user)
        if call.status in (201, 204):
            m.decided.add(proposal)
            if verb == "accept":
                m.entries[proposal] = call.body["text"]

    def _accept(self, m: UserModel) -> None:
        self._decide(m, "accept")

    def _reject(self, m: UserModel) -> None:
        self._decide(m, "reject")

    # ---- hosts and workers ----
    def _register(self, m: UserModel) -> None:
        session = f"{m.user}-s{len(m.sessions)}"
        body = {"user_id": m.user, "thread_id": "t", "agent": "chaos", "manifest": {"memory": self.rng.random() < 0.9}}
        if self.http.iam("PUT", f"/v1/sessions/{session}", "/v1/sessions/{session_id}", "host", body).status == 200:
            m.sessions.append(session)
            m.events[session] = []

    def _untrusted(self, m: UserModel) -> None:
        if m.sessions:
            s = self.rng.choice(m.sessions)
            self.http.iam("POST", f"/v1/sessions/{s}/untrusted", "/v1/sessions/{session_id}/untrusted", "host")

    def _propose(self, m: UserModel) -> None:
        if not m.sessions:
            return
        session = self.rng.choice(m.sessions)
        posted = m.events[session]
        events = []
        for _ in range(self.rng.randint(1, 3)):
            if posted and self.rng.random() < 0.15:
                event_id = self.rng.choice(posted)  # the same event again: must change nothing
            else:
                event_id = f"e{len(posted) + len(events)}"
            text = self.text() if self.rng.random() < 0.9 else "   "
            events.append({"id": event_id, "type": "memory.propose", "text": text, "kind": "note"})
        call = self.http.iam(
            "POST", f"/v1/sessions/{session}/events", "/v1/sessions/{session_id}/events", "worker", {"events": events}
        )
        if call.status == 202:
            posted.extend(dict.fromkeys(e["id"] for e in events if e["id"] not in posted))
        if self.pump is not None and self.rng.random() < 0.7:  # otherwise left pending for a while
            self.pump.drain(timeout=60)

    def _context(self, m: UserModel) -> None:
        if m.sessions:
            s = self.rng.choice(m.sessions)
            self.http.iam("GET", f"/v1/sessions/{s}/memory", "/v1/sessions/{session_id}/memory", "host")

    # ---- operators ----
    def _operator_read(self, m: UserModel) -> None:
        self.http.iam("GET", f"/v1/operator/memory?user_id={m.user}", "/v1/operator/memory", "operator")

    def _operator_forget(self, m: UserModel) -> None:
        if m.entries:
            entry = self.rng.choice(sorted(m.entries))
            path = f"/v1/operator/memory/{entry}?user_id={m.user}"
            if self.http.iam("DELETE", path, "/v1/operator/memory/{id}", "operator").status == 204:
                del m.entries[entry]

    def _operator_forget_all(self, m: UserModel) -> None:
        path = f"/v1/operator/memory?user_id={m.user}"
        self._forget_everything(m, lambda: self.http.iam("DELETE", path, "/v1/operator/memory", "operator"))


def run(
    seed: int, steps: int, rate: float = 0.05, workers: int = 1, users: int = 3, real_sleeps: bool = False
) -> dict[str, Any]:
    import botocore.endpoint

    from chalicelib.storage import retries
    from tests.support.chaos_checks import check_all

    backoff = Backoff()
    if not real_sleeps:
        botocore.endpoint.time = backoff  # type: ignore[attr-defined] # it uses time only to sleep between retries
        retries.sleep = backoff.sleep

    environment = dict(os.environ)  # put back at the end: the stack sets its endpoints in os.environ for good
    os.environ.update({"MEMORY_FAULT_RATE": str(rate), "MEMORY_FAULT_SEED": str(seed)})
    tee_out, tee_err = Tee(sys.stdout), Tee(sys.stderr)
    real_out, real_err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = tee_out, tee_err  # type: ignore[assignment]
    started = time.monotonic()
    try:
        from local.stack import LocalStack

        with tempfile.TemporaryDirectory(prefix="chaos-") as scratch:
            stack = LocalStack(port=0, credentials_file=Path(scratch) / "credentials.json").start()
            try:
                dead_letters: list[dict[str, Any]] = []
                # The pump's give-up hook is the local stand-in for the deployed dead-letter queue.
                stack.pump._on_give_up = lambda record, reason: dead_letters.append(record)
                http = Http(stack.url, stack.principals, stack.issuer.mint)
                sequential = workers == 1
                if sequential:  # one caller and the pump in its thread: nothing concurrent, a seed replays exactly
                    stack.pump.stop()
                crew = [Worker(http, seed, n, users, stack.pump if sequential else None) for n in range(workers)]
                threads = [threading.Thread(target=w.run, args=(steps // workers,)) for w in crew]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
                workload_seconds = time.monotonic() - started

                def logs() -> str:
                    return tee_out.buffer_text.getvalue() + tee_err.buffer_text.getvalue()

                report = check_all(stack, http, crew, logs, dead_letters)
            finally:
                stack.stop()
    finally:
        sys.stdout, sys.stderr = real_out, real_err
        os.environ.clear()
        os.environ.update(environment)
    report.update(seed=seed, steps=steps, rate=rate, workers=workers, workload_seconds=round(workload_seconds, 1))
    if not real_sleeps:
        report.update(backoffs=backoff.count, backoff_seconds_skipped=round(backoff.seconds, 1))
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--n", type=int, default=300, help="workload steps (each one or a few requests)")
    parser.add_argument("--rate", type=float, default=0.05)
    parser.add_argument(
        "--workers", type=int, default=1, help="1: sequential and exactly reproducible; more: concurrent users"
    )
    parser.add_argument("--real-sleeps", action="store_true", help="wait out every retry backoff in full")
    args = parser.parse_args(argv)
    report = run(args.seed, args.n, args.rate, args.workers, real_sleeps=args.real_sleeps)
    print(json.dumps(report, indent=2, sort_keys=True))
    return 0 if not report["violations"] else 1


if __name__ == "__main__":
    sys.exit(main())
