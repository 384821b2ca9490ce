// The example agent (examples/memory-agent-js), run as a person would run it against the stack: by a
// connection token alone, and as a trusted runtime; its suggestion waits on the person's page.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { promisify } from "node:util";

import { BASE_URL, CREDENTIALS_FILE, asPerson, expectStatus, person, unique, waitingProposals } from "./support.js";

const AGENT = new URL("../../../../examples/memory-agent-js/agent.js", import.meta.url);
const run = async (...args) => JSON.parse((await promisify(execFile)(process.execPath, [AGENT.pathname, "--base-url", BASE_URL, "--json", ...args])).stdout);

test("the pack asks for memory and names its entrypoint", async () => {
  const pack = JSON.parse(readFileSync(new URL("pack.json", AGENT), "utf8"));
  assert.deepEqual(pack, { name: "memory-agent-js", version: "0.1.0", entrypoint: "agent.js:run", manifest: { memory: true } });
  assert.equal(typeof (await import(AGENT.href)).run, "function");
});

test("with a connection token alone, the example's suggestion waits on the person's page", async () => {
  const { token } = await person("Lives in Lyon");
  const made = expectStatus(await asPerson(token, "POST", "/v1/connections", { agent: "memory-agent-js" }), 201);
  const report = await run("--token", made.token, "--wait", "60");
  assert.equal(report.items, 1);
  assert.match(report.prompt, /\| \[1\] kind=preference pinned=no tainted=no ref=[A-Za-z0-9_-]+ text="Lives in Lyon"/);
  assert.equal(report.outcome.type, "memory.proposed");
  const [proposal] = await waitingProposals(token);
  assert.deepEqual([proposal.text, proposal.agent, proposal.tainted], ["Prefers short, direct answers", "memory-agent-js", true]);
});

test("as a trusted runtime, it registers the session with its pack's manifest and proposes as the worker", async () => {
  const { userId, token } = await person();
  const report = await run("--session-id", unique("sess"), "--user", userId, "--credentials", CREDENTIALS_FILE, "--wait", "60");
  assert.equal(report.outcome.type, "memory.proposed");
  const [proposal] = await waitingProposals(token);
  assert.deepEqual([proposal.text, proposal.agent, proposal.tainted], ["Prefers short, direct answers", "memory-agent-js", false]);
});

test("the example names the older note about answers as the entry its suggestion replaces", async () => {
  const { token } = await person("Prefers long answers", "Lives in Lyon");
  const made = expectStatus(await asPerson(token, "POST", "/v1/connections", { agent: "memory-agent-js" }), 201);
  const report = await run("--token", made.token, "--wait", "60");
  assert.equal(report.outcome.type, "memory.proposed");
  const [proposal] = await waitingProposals(token);
  assert.equal(proposal.text, "Prefers short, direct answers");
  assert.equal(proposal.replaces.text, "Prefers long answers");
});

test("an item that already says it, as the service compares texts, is not proposed again", async () => {
  const { token } = await person("prefers SHORT,  direct answers.");
  const made = expectStatus(await asPerson(token, "POST", "/v1/connections", { agent: "memory-agent-js" }), 201);
  const report = await run("--token", made.token, "--wait", "0");
  assert.equal(report.proposed, null);
  assert.deepEqual(await waitingProposals(token, 0), []);
});
