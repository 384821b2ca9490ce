// The two IAM callers' clients: a host registers sessions, marks them untrusted and fetches their
// memory context; a worker posts a session's agent events with its own ids and reads their outcomes.
// Both sign every request with AWS's SigV4 signer (transport.js).

import { randomUUID } from "node:crypto";

import { loadCredentialsFile } from "./credentials.js";
import { ProtocolError } from "./errors.js";
import { itemsFromJson, checkProposal } from "./memory.js";
import { Transport } from "./transport.js";

const MAX_SESSION_ID_CHARS = 256;
const MAX_EVENT_ID_CHARS = 128;
// The server accepts 1..20 events per post.
export const MAX_EVENTS_PER_POST = 20;

/** `/v1/sessions/{sessionId}{suffix}` with the id percent-encoded as one path segment. */
export function sessionPath(sessionId, suffix = "") {
  if (typeof sessionId !== "string" || sessionId === "") throw new TypeError("sessionId must be a non-empty string");
  if (sessionId.length > MAX_SESSION_ID_CHARS) throw new RangeError(`sessionId must be at most ${MAX_SESSION_ID_CHARS} characters`);
  if (sessionId === "." || sessionId === "..") throw new RangeError("sessionId must not be '.' or '..'"); // a path step
  return `/v1/sessions/${encodeURIComponent(sessionId)}${suffix}`;
}

/** A fresh, unguessable event id (a v4 UUID). */
export const newEventId = () => randomUUID();

/** Parse a document's answer where the contract promises one; the field is named, never its value. */
function parsed(method, path, parse) {
  try {
    return parse();
  } catch (error) {
    if (error instanceof TypeError) throw new ProtocolError(method, path, error.message);
    throw error;
  }
}

const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

class SignedClient {
  static ROLE = "";

  /**
   * `credentials`: `{accessKeyId, secretAccessKey, sessionToken?}` or an async provider of them
   * (e.g. `fromNodeProviderChain()` of @aws-sdk/credential-providers, which refreshes a role's keys).
   */
  constructor(baseUrl, credentials, options = {}) {
    if (!credentials) throw new TypeError("credentials are required");
    this._transport = new Transport(baseUrl, { ...options, credentials });
  }

  /** A client from the local stack's `.local/credentials.json` (this class's role). */
  static fromCredentialsFile(baseUrl, path, options = {}) {
    return new this(baseUrl, loadCredentialsFile(path, this.ROLE), options);
  }

  get baseUrl() {
    return this._transport.baseUrl;
  }
}

function session(document) {
  if (!isObject(document)) throw new TypeError("session is not an object");
  const memory = isObject(document.manifest) ? document.manifest.memory : undefined;
  if (typeof memory !== "boolean") throw new TypeError("manifest.memory is missing or not a boolean");
  for (const name of ["session_id", "agent"]) {
    if (typeof document[name] !== "string") throw new TypeError(`${name} is missing or not a string`);
  }
  for (const name of ["user_id", "thread_id"]) {
    if (document[name] != null && typeof document[name] !== "string") throw new TypeError(`${name} is not a string or null`);
  }
  if (typeof document.tainted !== "boolean") throw new TypeError("tainted is missing or not a boolean");
  return Object.freeze({
    sessionId: document.session_id,
    userId: document.user_id ?? null,
    threadId: document.thread_id ?? null,
    agent: document.agent,
    memory,
    tainted: document.tainted,
  });
}

/** Signed as a host role. */
export class HostClient extends SignedClient {
  static ROLE = "host";

  /**
   * Register (or repeat the registration of) a session. `memory` is the agent manifest's
   * `"memory"` flag (its pack.json). Repeating the same registration is harmless; another user or
   * manifest for a known session rejects with ConflictError.
   */
  async registerSession(sessionId, { userId, agent, memory, threadId = null }) {
    if (typeof memory !== "boolean") throw new TypeError("memory must be a boolean (the manifest's flag)");
    const body = { user_id: userId ?? null, thread_id: threadId, agent, manifest: { memory } };
    return this.#session("PUT", sessionPath(sessionId), body);
  }

  /** Record that the session read untrusted content: its proposals are tainted from then on. */
  async markUntrusted(sessionId) {
    return this.#session("POST", sessionPath(sessionId, "/untrusted"));
  }

  /** The items the agent of this session may see: empty unless every gate is open. */
  async fetchContext(sessionId) {
    const path = sessionPath(sessionId, "/memory");
    const answer = await this._transport.request("GET", path);
    return parsed("GET", path, () => {
      if (!isObject(answer)) throw new TypeError("body is not an object");
      return itemsFromJson(answer.items);
    });
  }

  async #session(method, path, body) {
    const answer = await this._transport.request(method, path, body);
    return parsed(method, path, () => session(answer));
  }
}

/** A stored event's outcome: `memory.proposed` (with the proposal's id) or `memory.proposal_refused` (a reason, never text). */
export function outcomeFromJson(document) {
  if (document === null || document === undefined) return null;
  if (!isObject(document) || typeof document.type !== "string") throw new TypeError("event.outcome is not an object with a type");
  return Object.freeze({
    type: document.type,
    proposalId: typeof document.proposal_id === "string" ? document.proposal_id : null,
    reason: typeof document.reason === "string" ? document.reason : null,
    proposed: document.type === "memory.proposed",
    refused: document.type === "memory.proposal_refused",
  });
}

function eventRecord(document) {
  if (!isObject(document)) throw new TypeError("event is not an object");
  for (const name of ["id", "type", "status"]) {
    if (typeof document[name] !== "string") throw new TypeError(`event.${name} is missing or not a string`);
  }
  const optional = (name) => {
    if (document[name] != null && typeof document[name] !== "string") throw new TypeError(`event.${name} is not a string`);
    return document[name] ?? null;
  };
  return Object.freeze({
    id: document.id,
    type: document.type,
    status: document.status,
    handled: document.status === "handled",
    kind: optional("kind"),
    messageId: optional("message_id"),
    createdAt: optional("created_at"),
    outcome: outcomeFromJson(document.outcome),
  });
}

/** The wire form of one `memory.propose` event; checked before anything is sent. */
function eventJson({ id, text, kind = "note", messageId, replaces }) {
  if (typeof id !== "string" || id.length === 0 || id.length > MAX_EVENT_ID_CHARS) {
    throw new RangeError(`event id must be a string of 1..${MAX_EVENT_ID_CHARS} characters`);
  }
  checkProposal(text, kind, replaces);
  if (messageId != null && typeof messageId !== "string") throw new TypeError("messageId must be a string");
  const document = { id, type: "memory.propose", text, kind };
  if (messageId != null) document.message_id = messageId;
  if (replaces != null) document.replaces = replaces;
  return document;
}

/** Polls `read()` until it gives an outcome or `timeoutMs` passes (then null). */
export async function waitFor(read, { timeoutMs = 30_000, intervalMs = 200 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const outcome = await read();
    if (outcome !== null || Date.now() >= deadline) return outcome;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Signed as a worker role: posts a session's agent events and reads their outcomes. */
export class WorkerClient extends SignedClient {
  static ROLE = "worker";

  /** Post 1..20 events `{id, text, kind, messageId?, replaces?}`; resolves to how many the server accepted. Safe to repeat. */
  async postEvents(sessionId, events) {
    if (!Array.isArray(events) || events.length < 1 || events.length > MAX_EVENTS_PER_POST) {
      throw new RangeError(`post 1..${MAX_EVENTS_PER_POST} events at a time`);
    }
    const documents = events.map(eventJson);
    if (new Set(documents.map((event) => event.id)).size !== documents.length) {
      throw new RangeError("event ids must be unique within a post");
    }
    const path = sessionPath(sessionId, "/events");
    const answer = await this._transport.request("POST", path, { events: documents });
    const accepted = isObject(answer) ? answer.accepted : undefined;
    if (!Number.isInteger(accepted)) throw new ProtocolError("POST", path, "accepted is missing or not an integer");
    return accepted;
  }

  /**
   * Post one `memory.propose` event; resolves to its id. The id is fixed before the first attempt
   * and resent on every retry; pass a previous id as `eventId` to repeat a proposal whose post
   * failed: the server never makes it twice.
   */
  async propose(sessionId, text, kind = "note", { messageId, eventId, replaces } = {}) {
    const id = eventId ?? newEventId();
    await this.postEvents(sessionId, [{ id, text, kind, messageId, replaces }]);
    return id;
  }

  /** The session's events and their outcomes, as the server stores them (handled ones carry no text). */
  async listEvents(sessionId) {
    const path = sessionPath(sessionId, "/events");
    const answer = await this._transport.request("GET", path);
    return parsed("GET", path, () => {
      const documents = isObject(answer) ? answer.events : undefined;
      if (!Array.isArray(documents)) throw new TypeError("events is missing or not a list");
      return Object.freeze(documents.map(eventRecord));
    });
  }

  /** The event's outcome once the stream has handled it; null while it waits (or is unknown). */
  async outcome(sessionId, eventId) {
    const event = (await this.listEvents(sessionId)).find((record) => record.id === eventId);
    return event?.handled ? event.outcome : null;
  }

  /** Polls `outcome` until there is one or `timeoutMs` passes (then null). */
  async waitForOutcome(sessionId, eventId, options) {
    return waitFor(() => this.outcome(sessionId, eventId), options);
  }
}
