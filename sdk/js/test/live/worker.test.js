// The seed's worker tests, against the real API: ctx.memory's entries arrive frozen, are never echoed
// into the session's events, and propose() leaves a waiting suggestion on the person's page; a refusal
// gives a reason, never the text; a retried post reuses its event id and makes nothing twice.
import assert from "node:assert/strict";
import { test } from "node:test";
import { inspect } from "node:util";

import { loadContext } from "../../src/index.js";
import { STREAM_TIMEOUT_MS, asPerson, expectStatus, host, person, session, waitingProposals, worker } from "./support.js";

const KEPT = ["Prefers metric units", "Works night shifts"];

test("entries arrive frozen: every mutation throws in strict mode", async () => {
  const { userId } = await person(...KEPT);
  const sessionId = await session(userId);
  const ctx = await loadContext(sessionId, host(), worker());
  const { items } = ctx.memory;
  assert.deepEqual(items.map((item) => item.text).sort(), [...KEPT].sort());
  assert.ok(Object.isFrozen(items) && items.every(Object.isFrozen) && Object.isFrozen(ctx) && Object.isFrozen(ctx.memory));
  assert.throws(() => items.push({ text: "x" }), TypeError);
  assert.throws(() => items.pop(), TypeError);
  assert.throws(() => { items[0] = items[1]; }, TypeError);
  assert.throws(() => { items[0].text = "rewritten"; }, TypeError);
  assert.throws(() => { items[0].pinned = true; }, TypeError);
  assert.throws(() => { delete items[0].tainted; }, TypeError);
  assert.throws(() => { ctx.memory.items = []; }, TypeError);
  assert.throws(() => { ctx.memory.propose = async () => "x"; }, TypeError);
  for (const item of items) {
    assert.deepEqual(Object.keys(item), ["text", "kind", "pinned", "tainted", "ref"]);
    assert.equal(item.kind, "preference");
    assert.equal(item.tainted, false);
    assert.ok(!inspect(item).includes(item.text), "printing an item shows its length, never its text");
  }
});

test("the items are never echoed into the session's events; only the proposal is, and handled it keeps no text", async () => {
  const { userId, token } = await person(...KEPT);
  const sessionId = await session(userId);
  const w = worker();
  const ctx = await loadContext(sessionId, host(), w);
  assert.equal(ctx.memory.items.length, 2);
  const eventId = await ctx.memory.propose("Likes window seats", "preference", { messageId: "m-1" });
  const outcome = await w.waitForOutcome(sessionId, eventId, { timeoutMs: STREAM_TIMEOUT_MS });
  assert.equal(outcome?.type, "memory.proposed");
  const events = await w.listEvents(sessionId);
  assert.deepEqual(events.map((event) => [event.id, event.type, event.kind, event.messageId]), [
    [eventId, "memory.propose", "preference", "m-1"],
  ]);
  const raw = JSON.stringify(
    expectStatus(await asPerson(token, "GET", "/v1/memory"), 200).items.map((item) => item.text),
  );
  const stored = JSON.stringify(events);
  for (const text of [...KEPT, "Likes window seats"]) assert.ok(!stored.includes(text), "events hold no text");
  assert.ok(raw.includes(KEPT[0]), "the person's entries are unchanged");
});

test("propose leaves a waiting suggestion on the person's page, named after the agent and the session", async () => {
  const { userId, token } = await person(...KEPT);
  const sessionId = await session(userId, { agent: "js-agent" });
  const w = worker();
  const ctx = await loadContext(sessionId, host(), w);
  const eventId = await ctx.memory.propose("Vegetarian since 2019", "fact");
  assert.match(eventId, /^[0-9a-f-]{36}$/);
  const [proposal, ...others] = await waitingProposals(token);
  assert.deepEqual(others, []);
  assert.equal(proposal.text, "Vegetarian since 2019");
  assert.equal(proposal.kind, "fact");
  assert.equal(proposal.origin, "agent");
  assert.equal(proposal.agent, "js-agent");
  assert.equal(proposal.tainted, false);
  assert.equal(proposal.source.session_id, sessionId);
  const outcome = await w.waitForOutcome(sessionId, eventId, { timeoutMs: STREAM_TIMEOUT_MS });
  assert.deepEqual({ ...outcome }, { type: "memory.proposed", proposalId: proposal.id, reason: null, proposed: true, refused: false });
  // Nothing became an entry: the person decides.
  const { items } = expectStatus(await asPerson(token, "GET", "/v1/memory"), 200);
  assert.deepEqual(items.map((item) => item.text).sort(), [...KEPT].sort());
});

test("a session marked untrusted proposes tainted suggestions", async () => {
  const { userId, token } = await person();
  const sessionId = await session(userId);
  const h = host();
  const marked = await h.markUntrusted(sessionId);
  assert.equal(marked.tainted, true);
  const ctx = await loadContext(sessionId, h, worker());
  await ctx.memory.propose("Read it on a web page", "note");
  const [proposal] = await waitingProposals(token);
  assert.equal(proposal.tainted, true);
});

test("refusals give a reason code, never the text", async () => {
  const { userId, token } = await person();
  const sessionId = await session(userId);
  const w = worker();
  const ctx = await loadContext(sessionId, host(), w);
  const secret = "my key is AKIA" + "Z7QW2ERTY5UIOPAS";
  const refusedId = await ctx.memory.propose(secret, "note");
  const emptyId = await ctx.memory.propose("   ", "note");
  const refused = await w.waitForOutcome(sessionId, refusedId, { timeoutMs: STREAM_TIMEOUT_MS });
  const empty = await w.waitForOutcome(sessionId, emptyId, { timeoutMs: STREAM_TIMEOUT_MS });
  assert.equal(refused.type, "memory.proposal_refused");
  assert.match(refused.reason, /^credential:[a-z0-9_]+$/);
  assert.equal(empty.reason, "empty");
  const everything = JSON.stringify(await w.listEvents(sessionId));
  assert.ok(!everything.includes("AKIA") && !everything.includes("my key"));
  assert.deepEqual(await waitingProposals(token, 0), []);
});

test("memory off: the context is empty and a proposal is refused memory_off", async () => {
  const { userId, token } = await person(...KEPT);
  expectStatus(await asPerson(token, "PUT", "/v1/memory/settings", { enabled: false }), 200);
  const sessionId = await session(userId);
  const w = worker();
  const ctx = await loadContext(sessionId, host(), w);
  assert.deepEqual(ctx.memory.items, []);
  const eventId = await ctx.memory.propose("Anything", "note");
  const outcome = await w.waitForOutcome(sessionId, eventId, { timeoutMs: STREAM_TIMEOUT_MS });
  assert.equal(outcome.reason, "memory_off");
});

test("an unknown kind is refused before anything is sent", async () => {
  const { userId } = await person();
  const sessionId = await session(userId);
  const w = worker();
  const ctx = await loadContext(sessionId, host(), w);
  await assert.rejects(ctx.memory.propose("x", "instruction"), RangeError);
  await assert.rejects(ctx.memory.propose(42, "note"), TypeError);
  assert.deepEqual(await w.listEvents(sessionId), []);
});

test("posting the same event id again changes nothing: one event, one suggestion", async () => {
  const { userId, token } = await person();
  const sessionId = await session(userId);
  const w = worker();
  const ctx = await loadContext(sessionId, host(), w);
  const eventId = await ctx.memory.propose("Flies from Lyon", "fact");
  assert.equal(await ctx.memory.propose("Flies from Lyon", "fact", { eventId }), eventId);
  assert.equal(await w.postEvents(sessionId, [{ id: eventId, text: "Flies from Lyon", kind: "fact" }]), 0);
  assert.equal((await w.waitForOutcome(sessionId, eventId, { timeoutMs: STREAM_TIMEOUT_MS })).type, "memory.proposed");
  assert.equal((await w.listEvents(sessionId)).length, 1);
  const { proposals } = expectStatus(await asPerson(token, "GET", "/v1/memory"), 200);
  assert.deepEqual(proposals.map((proposal) => proposal.text), ["Flies from Lyon"]);
});
