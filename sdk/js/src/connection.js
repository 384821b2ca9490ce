// A person's own agent, by the connection token they made on their memory page: the agent routes
// (`/v1/agent/*`), nothing else, and no AWS role. The token reaches that one person's memory, as the
// one agent the person named when connecting. It is never part of a message, an error or an inspect.

import { ProtocolError } from "./errors.js";
import { checkProposal, itemsFromJson } from "./memory.js";
import { outcomeFromJson, waitFor } from "./clients.js";
import { Transport } from "./transport.js";

export const TOKEN_PREFIX = "pmc_";

const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

function agentAndTaint(method, path, document) {
  if (typeof document.agent !== "string" || typeof document.tainted !== "boolean") {
    throw new ProtocolError(method, path, "agent or tainted missing");
  }
  return { agent: document.agent, tainted: document.tainted };
}

export class ConnectionClient {
  #reads;
  #writes;

  constructor(baseUrl, token, options = {}) {
    if (typeof token !== "string" || !token.startsWith(TOKEN_PREFIX)) {
      throw new TypeError("a connection token starts with pmc_ (made on the Agents tab of the memory page)");
    }
    this.#reads = new Transport(baseUrl, { ...options, bearer: token });
    // A suggestion's id is the service's: a retried POST could leave it twice, so it is sent once.
    this.#writes = new Transport(baseUrl, { ...options, bearer: token, retry: { maxAttempts: 1 } });
  }

  get baseUrl() {
    return this.#reads.baseUrl;
  }

  [Symbol.for("nodejs.util.inspect.custom")]() {
    return `ConnectionClient(${JSON.stringify(this.baseUrl)})`; // never the token
  }

  /** What a session of this agent for this person gets: `{items, agent, tainted}`. */
  async context() {
    const path = "/v1/agent/memory";
    const document = await this.#reads.request("GET", path);
    if (!isObject(document)) throw new ProtocolError("GET", path, "not an object");
    let items;
    try {
      items = itemsFromJson(document.items);
    } catch (error) {
      throw new ProtocolError("GET", path, error.message);
    }
    return Object.freeze({ items, ...agentAndTaint("GET", path, document) });
  }

  /** Leave a suggestion for the person to review: `{eventId, agent, tainted}`. */
  async propose(text, kind = "note", { replaces } = {}) {
    checkProposal(text, kind, replaces);
    const path = "/v1/agent/proposals";
    const body = { text, kind };
    if (replaces != null) body.replaces = replaces;
    const document = await this.#writes.request("POST", path, body);
    if (!isObject(document) || typeof document.event_id !== "string") {
      throw new ProtocolError("POST", path, "event_id missing");
    }
    return Object.freeze({ eventId: document.event_id, ...agentAndTaint("POST", path, document) });
  }

  /** The suggestion's outcome once the service has handled it; null while it is pending. */
  async outcome(eventId) {
    const path = `/v1/agent/proposals/${encodeURIComponent(eventId)}`;
    const document = await this.#reads.request("GET", path);
    if (!isObject(document) || typeof document.status !== "string") throw new ProtocolError("GET", path, "status missing");
    try {
      return document.status === "handled" ? outcomeFromJson(document.outcome) : null;
    } catch (error) {
      throw new ProtocolError("GET", path, error.message);
    }
  }

  /** Polls `outcome` until there is one or `timeoutMs` passes (then null). */
  async waitForOutcome(eventId, options) {
    return waitFor(() => this.outcome(eventId), options);
  }
}
