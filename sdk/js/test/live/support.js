// The real API for the live tests: BASE_URL (a `make run` stack; tests/http/test_js_sdk.py starts one)
// and CREDENTIALS_FILE (its .local/credentials.json). A person signs in with the launcher's dev token.
import { randomUUID } from "node:crypto";

import { HostClient, WorkerClient } from "../../src/index.js";

export const BASE_URL = process.env.BASE_URL;
export const CREDENTIALS_FILE = process.env.CREDENTIALS_FILE;
if (!BASE_URL || !CREDENTIALS_FILE) {
  throw new Error("the live tests need BASE_URL and CREDENTIALS_FILE (a local stack: see tests/http/test_js_sdk.py)");
}

// How long to wait for the stack's stream pump to hand an event to the consumer (a conditional wait:
// on two shared, loaded cores this has taken well over 20 s; tests/support/live.py waits as long).
export const STREAM_TIMEOUT_MS = 60_000;

export const host = () => HostClient.fromCredentialsFile(BASE_URL, CREDENTIALS_FILE);
export const worker = () => WorkerClient.fromCredentialsFile(BASE_URL, CREDENTIALS_FILE);
export const unique = (prefix) => `${prefix}-${randomUUID().slice(0, 8)}`;

/** A request as the person (their sign-in token): `{status, body}`. */
export async function asPerson(token, method, path, body) {
  const response = await fetch(BASE_URL + path, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** A fresh person with memory on and `texts` kept (as their own entries): `{userId, token}`. */
export async function person(...texts) {
  const userId = unique("js");
  const answer = await fetch(BASE_URL + "/dev/token", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ user_id: userId }),
  });
  const { token } = await answer.json();
  expectStatus(await asPerson(token, "PUT", "/v1/memory/settings", { enabled: true }), 200);
  for (const text of texts) expectStatus(await asPerson(token, "POST", "/v1/memory", { text, kind: "preference" }), 201);
  return { userId, token };
}

export function expectStatus(answer, status) {
  if (answer.status !== status) throw new Error(`expected ${status}, got ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** The person's waiting proposals once `count` of them wait (or what waits at the deadline). */
export async function waitingProposals(token, count = 1) {
  const deadline = Date.now() + STREAM_TIMEOUT_MS;
  for (;;) {
    const { proposals } = expectStatus(await asPerson(token, "GET", "/v1/memory"), 200);
    if (proposals.length >= count || Date.now() > deadline) return proposals;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A session of `agent` for the person, registered by the host with the manifest's memory flag. */
export async function session(userId, { agent = "js-agent", memory = true } = {}) {
  const sessionId = unique("sess");
  await host().registerSession(sessionId, { userId, agent, memory, threadId: unique("thread") });
  return sessionId;
}
