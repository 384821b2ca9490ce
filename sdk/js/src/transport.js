// JSON over HTTP: the one place that signs (AWS's own SigV4 signer), sends (fetch) and retries.
//
// Every route the IAM clients call is safe to repeat: registering a session with the same body,
// marking it untrusted, reading, and posting events whose ids the caller fixed before the first
// attempt. So a request may be retried on a connection error, a 5xx or a 429 without duplicating
// anything, as long as the very same body is resent (it is: the body is serialised once).

import { Hash } from "@smithy/hash-node";
import { SignatureV4 } from "@smithy/signature-v4";

import { ProtocolError, TransportError, errorFor } from "./errors.js";

export const SERVICE = "execute-api";
export const DEFAULT_REGION = "us-east-1";
// Answers are small JSON documents (20 entries, 4 KiB of text); anything far bigger is not ours.
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

export const DEFAULT_RETRY = Object.freeze({ maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 5000 });

function retryPolicy(retry = {}) {
  const policy = { ...DEFAULT_RETRY, ...retry };
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1) {
    throw new RangeError("retry.maxAttempts must be an integer of at least 1");
  }
  if (!(policy.baseDelayMs >= 0) || !(policy.maxDelayMs >= 0)) {
    throw new RangeError("retry delays must not be negative");
  }
  return Object.freeze(policy);
}

/** Milliseconds to wait after failed attempt `attempt` (1-based): full jitter, or a numeric Retry-After. */
function delayMs(policy, attempt, retryAfterSeconds) {
  if (retryAfterSeconds !== null) return Math.min(Math.max(retryAfterSeconds * 1000, 0), policy.maxDelayMs);
  return Math.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
}

const retryable = (status) => status === 429 || status >= 500;

function retryAfter(value) {
  if (value === null || value.trim() === "") return null;
  const seconds = Number(value);
  return Number.isFinite(seconds) ? seconds : null; // an HTTP date: fall back to our own backoff
}

function baseUrlOf(value) {
  let url;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError("baseUrl must be an http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError("baseUrl must be an http(s) URL");
  if (url.search || url.hash) throw new TypeError("baseUrl must not carry a query or fragment");
  if (url.username || url.password) throw new TypeError("baseUrl must not carry a user name or password");
  return url.href.replace(/\/+$/, "");
}

/**
 * Sends JSON requests to one base URL: signed as one IAM principal (`credentials`), or with a
 * connection token (`bearer`). Never both; never a redirect followed (a signed request is not
 * replayed elsewhere, a token not sent elsewhere).
 */
export class Transport {
  #signer;
  #bearer;
  #fetch;
  #sleep;
  #timeoutMs;
  #retry;

  constructor(baseUrl, { credentials, bearer, region = DEFAULT_REGION, timeoutMs = 10_000, retry, fetch, sleep } = {}) {
    this.baseUrl = baseUrlOf(baseUrl);
    this.region = region;
    this.#bearer = bearer ?? null;
    this.#signer = credentials
      ? new SignatureV4({ service: SERVICE, region, credentials, sha256: Hash.bind(null, "sha256") })
      : null;
    this.#fetch = fetch ?? globalThis.fetch;
    this.#sleep = sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#timeoutMs = timeoutMs;
    this.#retry = retryPolicy(retry);
  }

  /**
   * Send once or more until an answer that is not retryable; resolve to its parsed JSON (null for
   * an empty body). Rejects with a typed ApiError for error statuses, TransportError when the
   * server could not be reached, ProtocolError for a success whose body is not JSON.
   */
  async request(method, path, body) {
    // Serialised once, so every retry sends byte-identical content (the same event ids).
    const data = body === undefined || body === null ? undefined : JSON.stringify(body);
    for (let attempt = 1; ; attempt++) {
      let answer;
      try {
        answer = await this.#sendOnce(method, path, data);
      } catch (error) {
        if (attempt >= this.#retry.maxAttempts) throw new TransportError(method, path, attempt, reason(error));
        await this.#sleep(delayMs(this.#retry, attempt, null));
        continue;
      }
      const { status, payload, retryAfterHeader } = answer;
      if (retryable(status) && attempt < this.#retry.maxAttempts) {
        await this.#sleep(delayMs(this.#retry, attempt, retryAfter(retryAfterHeader)));
        continue;
      }
      if (status < 200 || status >= 300) throw errorFor(status, errorCode(payload), method, path);
      return parse(method, path, status, payload);
    }
  }

  async #sendOnce(method, path, data) {
    const url = new URL(this.baseUrl + path);
    const headers = { accept: "application/json" };
    if (data !== undefined) headers["content-type"] = "application/json";
    if (this.#bearer !== null) headers.authorization = `Bearer ${this.#bearer}`;
    if (this.#signer !== null) {
      // Signed afresh for each attempt so X-Amz-Date stays inside the server's freshness window.
      const signed = await this.#signer.sign({
        method,
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port ? Number(url.port) : undefined,
        path: url.pathname,
        query: {},
        headers: { ...headers, host: url.host },
        body: data,
      });
      Object.assign(headers, signed.headers);
      delete headers.host; // fetch sends the same Host itself
    }
    const response = await this.#fetch(url, {
      method,
      headers,
      body: data,
      redirect: "manual",
      signal: AbortSignal.timeout(this.#timeoutMs),
    });
    return {
      status: response.status,
      payload: await readCapped(response),
      retryAfterHeader: response.headers.get("retry-after"),
    };
  }
}

async function readCapped(response) {
  if (!response.body) return new Uint8Array();
  const chunks = [];
  let size = 0;
  for await (const chunk of response.body) {
    chunks.push(chunk);
    size += chunk.byteLength;
    if (size > MAX_RESPONSE_BYTES) break;
  }
  const whole = Buffer.concat(chunks);
  return whole.subarray(0, MAX_RESPONSE_BYTES);
}

function parse(method, path, status, payload) {
  if (status === 204 || payload.length === 0) return null;
  try {
    return JSON.parse(Buffer.from(payload).toString("utf8"));
  } catch {
    throw new ProtocolError(method, path, "body is not JSON");
  }
}

/** The contract's `code` from an error body, if there is one; the `message` is never kept. */
function errorCode(payload) {
  try {
    const document = JSON.parse(Buffer.from(payload).toString("utf8"));
    const code = document !== null && typeof document === "object" ? document.code : undefined;
    return typeof code === "string" ? code : null;
  } catch {
    return null;
  }
}

/** A short, text-free description of why a connection failed. */
function reason(error) {
  if (error?.name === "TimeoutError" || error?.name === "AbortError") return "timed out";
  const cause = error?.cause;
  if (cause && typeof cause.code === "string") return cause.code;
  return error?.name ?? "Error";
}
