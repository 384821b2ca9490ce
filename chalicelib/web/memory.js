/* Loading the user's memory (with its ETag) and reporting API errors that belong to no single field. */

import { ApiError, SIGNED_OUT, conditionalGet } from "./api.js";
import { say } from "./status.js";
import { DEFAULT_LIMITS, ask, changed, emit, state } from "./store.js";
import { describeError } from "./words.js";

function accept(data) {
  state.memory = {
    enabled: Boolean(data && data.enabled),
    items: Array.isArray(data && data.items) ? data.items : [],
    proposals: Array.isArray(data && data.proposals) ? data.proposals : [],
    // Repeats of notes already kept: a textless place each, shown as one line per agent (review-bulk.js)
    repeats: Array.isArray(data && data.repeats) ? data.repeats.filter((r) => r && typeof r.id === "string" && typeof r.agent === "string") : [],
    limits: Object.assign({}, DEFAULT_LIMITS, (data && data.limits) || {}),
  };
  for (const id of [...state.editing.keys()]) {
    if (!state.memory.items.some((e) => e.id === id)) state.editing.delete(id);
  }
  for (const id of [...state.correcting.keys()]) {
    if (!state.memory.proposals.some((p) => p.id === id)) state.correcting.delete(id);
  }
}

/** GET /v1/memory; a 304 keeps what is shown. True when something new was rendered. */
export async function loadMemory(quiet) {
  // A load that started before a change finished must not paint the older state over it, and a
  // load that started for another person (signed out meanwhile) must not paint at all.
  const generation = state.changes;
  const token = state.token;
  try {
    const answer = await conditionalGet("v1/memory", state.memory ? state.etag : null);
    if (generation !== state.changes || !state.token || state.token !== token) return false;
    state.loadFailed = false;
    emit("answered", answer); // live.js: a 200 carries the server's polling advice, a 304 keeps it
    if (!answer.changed) return false;
    state.etag = answer.etag;
    accept(answer.data);
    emit("loaded"); // undo.js: a pending forget whose entry is gone elsewhere is withdrawn
    changed();
    return true;
  } catch (err) {
    if (!state.memory && state.token && state.token === token && err.code !== SIGNED_OUT) {
      state.loadFailed = true; // nothing of theirs is known: the page says so rather than "Off · 0 entries"
      changed();
    }
    if (!quiet) await reportError(err, "load");
    return false;
  }
}

export async function reportError(err, action) {
  if (err instanceof ApiError && err.code === SIGNED_OUT) return; // the previous person's answer (api.js)
  if (!(err instanceof ApiError)) {
    say("Something went wrong on this page. Please reload it.", "error", "page");
    return;
  }
  if (err.status === 401 || err.status === 403) {
    ask("signOut", false);
    say(describeError(err, action), "error", err.code);
    return;
  }
  say(describeError(err, action), "error", err.code);
  if (err.code === "not_found" || err.code === "conflict" || (err.code === "unavailable" && err.deleted !== null)) {
    await loadMemory(true); // an interrupted forget-all: what is left no longer opens, so the list is empty
  }
}
