// `ref` and `replaces` against the real API (DESIGN.md, "Reviewing what agents suggest"): each item
// carries an opaque handle valid in its session only; propose(..., {replaces: item.ref}) makes a
// suggestion that shows the person which entry it would replace, and accepting it replaces that entry.
import assert from "node:assert/strict";
import { test } from "node:test";

import { ConnectionClient, loadConnectionContext, loadContext } from "../../src/index.js";
import { BASE_URL, STREAM_TIMEOUT_MS, asPerson, expectStatus, host, person, session, waitingProposals, worker } from "./support.js";

const entries = async (token) => expectStatus(await asPerson(token, "GET", "/v1/memory"), 200).items;

test("each item's ref names no entry id, holds within its session and links no two sessions", async () => {
  const { userId, token } = await person("Prefers long answers");
  const [entry] = await entries(token);
  const h = host();
  const first = await session(userId);
  const [item] = await h.fetchContext(first);
  assert.equal(typeof item.ref, "string");
  assert.ok(item.ref.length > 0 && !item.ref.includes(entry.id));
  assert.equal((await h.fetchContext(first))[0].ref, item.ref);
  assert.notEqual((await h.fetchContext(await session(userId)))[0].ref, item.ref);
});

test("propose with replaces: the person sees which entry it would replace, and accepting replaces it", async () => {
  const { userId, token } = await person("Prefers long answers", "Lives in Lyon");
  const sessionId = await session(userId);
  const w = worker();
  const ctx = await loadContext(sessionId, host(), w);
  const old = ctx.memory.items.find((item) => item.text === "Prefers long answers");
  const eventId = await ctx.memory.propose("Prefers short, direct answers", "preference", { replaces: old.ref });
  assert.equal((await w.waitForOutcome(sessionId, eventId, { timeoutMs: STREAM_TIMEOUT_MS })).type, "memory.proposed");
  assert.ok(!JSON.stringify(await w.listEvents(sessionId)).includes("Prefers"), "events hold no text");
  const replaced = (await entries(token)).find((entry) => entry.text === "Prefers long answers");
  const [proposal] = await waitingProposals(token);
  assert.equal(proposal.text, "Prefers short, direct answers");
  assert.deepEqual(proposal.replaces, { id: replaced.id, text: "Prefers long answers" });
  expectStatus(await asPerson(token, "POST", `/v1/memory/${proposal.id}/accept`), 201);
  assert.deepEqual((await entries(token)).map((entry) => entry.text).sort(), ["Lives in Lyon", "Prefers short, direct answers"]);
});

test("another session's ref makes an ordinary suggestion, and the agent is told nothing else", async () => {
  const { userId, token } = await person("Prefers long answers");
  const [theirs] = await host().fetchContext(await session(userId));
  const sessionId = await session(userId);
  const w = worker();
  const eventId = await w.propose(sessionId, "Prefers short answers", "preference", { replaces: theirs.ref });
  assert.equal((await w.waitForOutcome(sessionId, eventId, { timeoutMs: STREAM_TIMEOUT_MS })).type, "memory.proposed");
  const [proposal] = await waitingProposals(token);
  assert.equal(proposal.replaces, null);
});

test("a connection's suggestion replaces an entry by the ref its context gave", async () => {
  const { token } = await person("Prefers long answers");
  const made = expectStatus(await asPerson(token, "POST", "/v1/connections", { agent: "js-agent" }), 201);
  const client = new ConnectionClient(BASE_URL, made.token);
  const ctx = await loadConnectionContext(client);
  const [item] = ctx.memory.items;
  const eventId = await ctx.memory.propose("Prefers short answers", "preference", { replaces: item.ref });
  assert.equal((await client.waitForOutcome(eventId, { timeoutMs: STREAM_TIMEOUT_MS })).type, "memory.proposed");
  const [entry] = await entries(token);
  const [proposal] = await waitingProposals(token);
  assert.deepEqual(proposal.replaces, { id: entry.id, text: "Prefers long answers" });
});
