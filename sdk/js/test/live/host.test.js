// The host path against the real API: register a session, mark it untrusted, fetch its context; the
// gates (manifest, user, memory on) decide; errors are typed by the contract's code; every request is
// signed by AWS's signer and verified by the stack as API Gateway would.
import assert from "node:assert/strict";
import { test } from "node:test";

import { ConflictError, ForbiddenError, InvalidRequestError, HostClient, NotFoundError, WorkerClient, loadCredentialsFile } from "../../src/index.js";
import { BASE_URL, CREDENTIALS_FILE, asPerson, expectStatus, host, person, unique, worker } from "./support.js";

test("a session registers, registers again identically, and refuses another user with a ConflictError", async () => {
  const { userId } = await person();
  const h = host();
  const sessionId = unique("sess");
  const registration = { userId, agent: "js-agent", memory: true, threadId: "t-1" };
  const first = await h.registerSession(sessionId, registration);
  assert.deepEqual({ ...first }, { sessionId, userId, threadId: "t-1", agent: "js-agent", memory: true, tainted: false });
  assert.deepEqual(await h.registerSession(sessionId, registration), first);
  const refused = await h.registerSession(sessionId, { ...registration, userId: "someone-else" }).catch((error) => error);
  assert.ok(refused instanceof ConflictError);
  assert.equal(refused.code, "conflict");
  assert.equal(refused.status, 409);
  assert.ok(!refused.message.includes("someone-else"));
});

test("the context: pinned first, then newest; empty unless the manifest asked for memory and the session has a user", async () => {
  const { userId, token } = await person();
  for (const [text, pinned] of [["Older note", false], ["Pinned note", true], ["Newest note", false]]) {
    expectStatus(await asPerson(token, "POST", "/v1/memory", { text, pinned }), 201);
  }
  const h = host();
  const withMemory = unique("sess");
  await h.registerSession(withMemory, { userId, agent: "js-agent", memory: true });
  const items = await h.fetchContext(withMemory);
  assert.deepEqual(items.map((item) => [item.text, item.pinned]), [["Pinned note", true], ["Newest note", false], ["Older note", false]]);
  const withoutMemory = unique("sess");
  await h.registerSession(withoutMemory, { userId, agent: "js-agent", memory: false });
  assert.deepEqual(await h.fetchContext(withoutMemory), []);
  const noUser = unique("sess");
  await h.registerSession(noUser, { userId: null, agent: "js-agent", memory: true });
  assert.deepEqual(await h.fetchContext(noUser), []);
});

test("taint only goes on, and the context says which entries came in tainted", async () => {
  const { userId } = await person("Kept by the person");
  const h = host();
  const sessionId = unique("sess");
  await h.registerSession(sessionId, { userId, agent: "js-agent", memory: true });
  assert.equal((await h.markUntrusted(sessionId)).tainted, true);
  assert.equal((await h.markUntrusted(sessionId)).tainted, true);
  const [item] = await h.fetchContext(sessionId);
  assert.equal(item.tainted, false, "the person's own entry is not tainted by the session reading the web");
});

test("an unknown session is a NotFoundError with the contract's code", async () => {
  const missing = await host().fetchContext(unique("never-registered")).catch((error) => error);
  assert.ok(missing instanceof NotFoundError);
  assert.equal(missing.code, "not_found");
});

test("session ids with colons and dots are one signed path segment; an id the contract refuses is an InvalidRequestError", async () => {
  const { userId } = await person("Likes tea");
  const h = host();
  for (const sessionId of [unique("chat:42"), unique("run.7:step_3")]) {
    const registered = await h.registerSession(sessionId, { userId, agent: "js-agent", memory: true });
    assert.equal(registered.sessionId, sessionId);
    assert.deepEqual((await h.fetchContext(sessionId)).map((item) => item.text), ["Likes tea"]);
  }
  const refused = await h.registerSession("a b/c%d", { userId, agent: "js-agent", memory: true }).catch((error) => error);
  assert.ok(refused instanceof InvalidRequestError);
  assert.equal(refused.code, "invalid_request");
});

test("a worker's keys on a host route, and a wrong secret, are ForbiddenErrors", async () => {
  const workerKeys = loadCredentialsFile(CREDENTIALS_FILE, "worker");
  const asWorker = new HostClient(BASE_URL, workerKeys);
  const refused = await asWorker.fetchContext(unique("sess")).catch((error) => error);
  assert.ok(refused instanceof ForbiddenError);
  assert.equal(refused.code, "forbidden");
  const hostKeys = loadCredentialsFile(CREDENTIALS_FILE, "host");
  const forged = new WorkerClient(BASE_URL, { ...hostKeys, secretAccessKey: hostKeys.secretAccessKey + "x" }, { retry: { maxAttempts: 1 } });
  const bad = await forged.listEvents(unique("sess")).catch((error) => error);
  assert.ok(bad instanceof ForbiddenError);
  assert.ok(!bad.message.includes(hostKeys.secretAccessKey));
  assert.deepEqual(await worker().listEvents(unique("never-registered")), []);
});
