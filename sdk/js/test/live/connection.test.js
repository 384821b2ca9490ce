// The connection path against the real API: a person's own agent with the token they made on their
// page, on the /v1/agent/* routes only: the same ctx.memory, suggestions waiting for the person.
import assert from "node:assert/strict";
import { test } from "node:test";
import { inspect } from "node:util";

import { ConnectionClient, NotFoundError, UnauthorizedError, loadConnectionContext } from "../../src/index.js";
import { BASE_URL, STREAM_TIMEOUT_MS, asPerson, expectStatus, person, waitingProposals } from "./support.js";

async function connect(token, { agent = "js-agent", trusted = false } = {}) {
  return expectStatus(await asPerson(token, "POST", "/v1/connections", { agent, trusted }), 201);
}

test("a connection reads the person's context as its agent, frozen, and its suggestion waits tainted", async () => {
  const { token } = await person("Prefers metric units");
  const made = await connect(token);
  const client = new ConnectionClient(BASE_URL, made.token);
  assert.ok(!inspect(client).includes(made.token));
  const ctx = await loadConnectionContext(client);
  assert.equal(ctx.agent, "js-agent");
  assert.equal(ctx.tainted, true);
  assert.deepEqual(ctx.memory.items.map((item) => item.text), ["Prefers metric units"]);
  assert.throws(() => { ctx.memory.items[0].text = "changed"; }, TypeError);
  assert.throws(() => ctx.memory.items.push({}), TypeError);
  const eventId = await ctx.memory.propose("Cycles to work", "fact");
  const outcome = await client.waitForOutcome(eventId, { timeoutMs: STREAM_TIMEOUT_MS });
  assert.equal(outcome.type, "memory.proposed");
  const [proposal] = await waitingProposals(token);
  assert.deepEqual([proposal.text, proposal.kind, proposal.agent, proposal.tainted], ["Cycles to work", "fact", "js-agent", true]);
});

test("a trusted connection's suggestions are not tainted", async () => {
  const { token } = await person();
  const client = new ConnectionClient(BASE_URL, (await connect(token, { agent: "my-script", trusted: true })).token);
  const suggestion = await client.propose("Works from home on Fridays", "note");
  assert.deepEqual([suggestion.agent, suggestion.tainted], ["my-script", false]);
  const [proposal] = await waitingProposals(token);
  assert.equal(proposal.tainted, false);
});

test("a refused suggestion gives its reason, never its text", async () => {
  const { token } = await person();
  const client = new ConnectionClient(BASE_URL, (await connect(token)).token);
  const { eventId } = await client.propose("password is hunter2 at https://admin:hunter2@example.com", "note");
  const outcome = await client.waitForOutcome(eventId, { timeoutMs: STREAM_TIMEOUT_MS });
  assert.equal(outcome.type, "memory.proposal_refused");
  assert.match(outcome.reason, /^credential:/);
  assert.ok(!JSON.stringify(outcome).includes("hunter2"));
});

test("a revoked token is an UnauthorizedError; another's event id a NotFoundError; a sign-in token is no connection token", async () => {
  const { token } = await person();
  const made = await connect(token);
  const client = new ConnectionClient(BASE_URL, made.token);
  await assert.rejects(client.outcome("1234-" + "0".repeat(32)), NotFoundError);
  expectStatus(await asPerson(token, "DELETE", `/v1/connections/${made.id}`), 204);
  const refused = await client.context().catch((error) => error);
  assert.ok(refused instanceof UnauthorizedError);
  assert.equal(refused.code, "unauthorized");
  assert.ok(!refused.message.includes(made.token));
  assert.throws(() => new ConnectionClient(BASE_URL, token), TypeError);
});
