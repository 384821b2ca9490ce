/* The page's API client: relative URLs (works at "/" and under a stage prefix), bearer token, ETags. */

import { state } from "./store.js";

export class ApiError extends Error {
  constructor(status, code, message, shape, field, deleted = null, existingId = null) {
    super(code);
    this.status = status;
    this.code = code;
    this.serverMessage = message;
    this.shape = shape;
    this.field = field;
    this.deleted = deleted; // only an interrupted forget-all's 503: its key is gone, this many items deleted
    this.existingId = existingId; // only a 409 duplicate: the entry that already says this
  }
}

function pageBase() {
  const path = window.location.pathname;
  return path.endsWith("/") ? path : path + "/";
}

export function apiUrl(path) {
  return new URL(pageBase() + path, window.location.origin).toString();
}

function request(method, path, body, extraHeaders) {
  const headers = { Accept: "application/json", ...(extraHeaders || {}) };
  if (state.token) headers.Authorization = `Bearer ${state.token}`;
  const init = { method, headers, credentials: "omit", cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  return init;
}

async function parse(response) {
  let data = null;
  if (response.status !== 204 && response.status !== 304) {
    const raw = await response.text();
    if (raw) {
      try { data = JSON.parse(raw); } catch (_err) { data = null; }
    }
  }
  if (!response.ok && response.status !== 304) {
    const ok = data && typeof data === "object";
    const text = (key) => (ok && typeof data[key] === "string" ? data[key] : null);
    throw new ApiError(response.status, text("code") || `http_${response.status}`, text("message") || "",
      text("shape"), text("field"), ok && Number.isInteger(data.deleted) ? data.deleted : null, text("existing_id"));
  }
  return data;
}

/** The code of an answer that came after its person signed out: it is theirs, so no caller acts on it
 * (reportError says nothing), whatever it was — a success, a refusal, a 401. */
export const SIGNED_OUT = "signed_out";

async function send(path, init) {
  const token = state.token;
  let response = null, data = null, failure = null;
  try {
    response = await fetch(apiUrl(path), init);
    data = await parse(response);
  } catch (err) {
    failure = err instanceof ApiError ? err : new ApiError(0, "network", "", null, null);
  }
  if (token !== null && state.token !== token) throw new ApiError(0, SIGNED_OUT, "", null, null);
  if (failure) throw failure;
  return { response, data };
}

export async function api(method, path, body) {
  return (await send(path, request(method, path, body))).data;
}

/** GET with If-None-Match: {changed: false} on 304, else {changed: true, data, etag}. */
export async function conditionalGet(path, etag) {
  const { response, data } = await send(path, request("GET", path, undefined, etag ? { "If-None-Match": etag } : {}));
  if (response.status === 304) return { changed: false };
  return { changed: true, data, etag: response.headers.get("ETag") };
}

/** Fire-and-forget that survives the page going away (a pending forget when the tab closes). */
export function sendOnExit(method, path) {
  try {
    fetch(apiUrl(path), { ...request(method, path), keepalive: true });
  } catch (_err) {
    /* the page is going away; nothing left to tell */
  }
}
