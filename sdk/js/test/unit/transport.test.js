// Retries against a scripted server on 127.0.0.1: a retried post resends the very same body (the same
// event id), signed afresh by SigV4 each time; 4xx is never retried, redirects never followed, and a
// connection's suggestion (whose id is the service's) is sent once.
import assert from "node:assert/strict";
import { test } from "node:test";

import { ConnectionClient, NotFoundError, ServerError, TransportError, UnavailableError, WorkerClient } from "../../src/index.js";
import { recordingServer } from "./recording_server.js";

const KEYS = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const noSleep = (slept = []) => ({ sleep: async (ms) => void slept.push(ms), slept });

test("a post that first fails resends the same event id and body, each attempt signed afresh for execute-api", async () => {
  const server = await recordingServer([{ status: 503, body: { code: "unavailable", message: "x" } }, "drop", { status: 202, body: { accepted: 1 } }]);
  const { sleep, slept } = noSleep();
  try {
    const worker = new WorkerClient(server.url, KEYS, { sleep });
    const eventId = await worker.propose("sess-1", "Prefers tea", "preference", { messageId: "m-1" });
    assert.equal(server.requests.length, 3);
    const bodies = new Set(server.requests.map((request) => request.body));
    assert.equal(bodies.size, 1);
    assert.deepEqual(JSON.parse([...bodies][0]), {
      events: [{ id: eventId, type: "memory.propose", text: "Prefers tea", kind: "preference", message_id: "m-1" }],
    });
    for (const { method, url, headers } of server.requests) {
      assert.equal(method, "POST");
      assert.equal(url, "/v1/sessions/sess-1/events");
      assert.match(
        headers.authorization,
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/execute-api\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/,
      );
      assert.match(headers["x-amz-date"], /^\d{8}T\d{6}Z$/);
    }
    assert.equal(slept.length, 2);
  } finally {
    await server.close();
  }
});

test("Retry-After is honoured, and the last 5xx is a typed error with the contract's code", async () => {
  const server = await recordingServer([{ status: 503, body: { code: "unavailable" }, headers: { "retry-after": "2" } }]);
  const { sleep, slept } = noSleep();
  try {
    const worker = new WorkerClient(server.url, KEYS, { sleep, retry: { maxAttempts: 3 } });
    const error = await worker.listEvents("s").catch((caught) => caught);
    assert.ok(error instanceof UnavailableError && error instanceof ServerError);
    assert.deepEqual([error.status, error.code, error.method, error.path], [503, "unavailable", "GET", "/v1/sessions/s/events"]);
    assert.deepEqual(slept, [2000, 2000]);
    assert.equal(server.requests.length, 3);
  } finally {
    await server.close();
  }
});

test("a 4xx is never retried, and the error never carries the server's message", async () => {
  const server = await recordingServer([{ status: 404, body: { code: "not_found", message: "Prefers tea was not found" } }]);
  try {
    const worker = new WorkerClient(server.url, KEYS, noSleep());
    const error = await worker.propose("s", "Prefers tea").catch((caught) => caught);
    assert.ok(error instanceof NotFoundError);
    assert.ok(!error.message.includes("Prefers tea") && !error.stack.includes("Prefers tea"));
    assert.equal(server.requests.length, 1);
  } finally {
    await server.close();
  }
});

test("a redirect is never followed: a signed request is not replayed elsewhere", async () => {
  const target = await recordingServer([{ status: 200, body: { events: [] } }]);
  const server = await recordingServer([{ status: 307, headers: { location: `${target.url}/v1/sessions/s/events` } }]);
  try {
    const error = await new WorkerClient(server.url, KEYS, noSleep()).listEvents("s").catch((caught) => caught);
    assert.equal(error.status, 307);
    assert.equal(target.requests.length, 0);
  } finally {
    await server.close();
    await target.close();
  }
});

test("an unreachable server is a TransportError after every attempt", async () => {
  const server = await recordingServer(["drop"]);
  try {
    const error = await new WorkerClient(server.url, KEYS, noSleep()).listEvents("s").catch((caught) => caught);
    assert.ok(error instanceof TransportError);
    assert.equal(error.attempts, 4);
    assert.equal(server.requests.length, 4);
  } finally {
    await server.close();
  }
});

test("a connection sends its bearer token, no signature, and a suggestion only once", async () => {
  const server = await recordingServer([{ status: 503 }, { status: 200, body: { items: [], agent: "a", tainted: true } }]);
  try {
    const client = new ConnectionClient(server.url, "pmc_secret", noSleep());
    await assert.rejects(client.propose("Prefers tea"), ServerError);
    assert.equal(server.requests.length, 1);
    const context = await client.context();
    assert.deepEqual([context.agent, context.tainted, context.items], ["a", true, []]);
    assert.equal(server.requests.at(-1).headers.authorization, "Bearer pmc_secret");
    assert.equal(server.requests.at(-1).headers["x-amz-date"], undefined);
  } finally {
    await server.close();
  }
});

test("a base URL with a query, a fragment, credentials or another scheme is refused", () => {
  for (const url of ["ftp://x", "http://x/?a=1", "http://x/#f", "http://me:pw@x", "not a url"]) {
    assert.throws(() => new WorkerClient(url, KEYS), TypeError, url);
  }
});
