/* The page's state in one place, the events that tell views it changed, and the one-change-at-a-time rule. */

export const DEFAULT_LIMITS = { entries: 200, proposals: 50, bytes_per_entry: 2000 };

export const state = {
  config: null,
  token: null,
  user: null,
  memory: null, // {enabled, items, proposals, limits} as GET /v1/memory last said; null: nothing of anyone's shown
  agents: null, // GET /v1/agents's rows, once the Agents tab was opened
  etag: null, // the ETag of that answer: polls send it back and get 304 while nothing changed
  poll: null, // {every, until, then} in ms of this page's clock: the server's advice with the last 200 (live.js)
  editing: new Map(), // entry id -> draft {text, kind, pinned, expiry, initialExpiry}
  correcting: new Map(), // proposal id -> draft {text, kind, pinned, expiry}
  expanded: new Set(), // ids of long texts the person chose to see whole (item.js)
  details: new Set(), // ids of suggestions whose details the person opened (proposal-row.js)
  proposalFilter: { tainted: false }, // "Only tainted suggestions" (proposals-view.js)
  pendingForget: null, // {entry, index, timer}: hidden now, deleted when the undo window closes (undo.js)
  filter: { text: "", kind: "", origin: "", tainted: false },
  journalCursor: null,
  loadFailed: false, // the first GET /v1/memory failed: nothing is known, and the page says so (app.js)
  busy: false,
  changes: 0, // bumped by every change, so an older load never paints over a newer state
};

export function limits() {
  return (state.memory && state.memory.limits) || DEFAULT_LIMITS;
}

/* ---- what the views show, derived from the state ---- */

export function filterActive() {
  const f = state.filter;
  return Boolean(f.text.trim() || f.kind || f.origin || f.tainted);
}

/** Does an entry pass the search and filters (on the page: nothing is sent)? */
export function matches(entry) {
  const f = state.filter;
  const words = f.text.trim().toLocaleLowerCase().split(/\s+/).filter(Boolean);
  const haystack = `${entry.text} ${entry.agent || ""}`.toLocaleLowerCase();
  return words.every((word) => haystack.includes(word))
    && (!f.kind || entry.kind === f.kind)
    && (!f.origin || entry.origin === f.origin)
    && (!f.tainted || Boolean(entry.tainted));
}

/** The entries the person has not just forgotten (one may be waiting out its undo window). */
export function visibleItems() {
  const pending = state.pendingForget && state.pendingForget.entry.id;
  return state.memory ? state.memory.items.filter((e) => e.id !== pending) : [];
}

/* ---- events: something happened; any number of modules may listen ---- */

const listeners = new Map();

/** Listen for a named event. The names the page uses are listed at the top of app.js. */
export function on(name, listener) {
  if (!listeners.has(name)) listeners.set(name, []);
  listeners.get(name).push(listener);
}

export function emit(name, detail) {
  for (const listener of listeners.get(name) || []) listener(detail);
}

/** Views register here; `changed()` re-renders them all from `state` (the "changed" event). */
export const onChange = (listener) => on("changed", listener);
export const changed = () => emit("changed");

/** Called when the person starts something new (clears old status messages). */
export const onAction = (hook) => on("action", hook);

/* ---- commands: "do this for me", answered by the one module that owns it ---- */

const handlers = new Map();

/** The module that owns a command (app.js wires them: "signOut", "forget") registers it here. */
export function handle(name, handler) {
  handlers.set(name, handler);
}

/** Ask for a command without importing its module (so no module imports session.js or a view). */
export function ask(name, ...args) {
  const handler = handlers.get(name);
  if (!handler) throw new Error(`no handler for ${name}`);
  return handler(...args);
}

/** A check that the person signed in now is still the one who started a change: a late answer for someone signed out draws nothing. */
export function signedInAsNow() {
  const token = state.token;
  return () => token !== null && state.token === token;
}

export async function run(task) {
  // One change at a time: a double click must not send the same request twice. The mark is this change's
  // own: sign-out clears it (the next person may act at once), and this change ending clears no later one.
  if (state.busy) return;
  emit("action");
  const mine = {};
  state.busy = mine;
  state.changes += 1;
  document.body.dataset.busy = "true"; // a hook for tests; aria-busy would mute the status line
  try {
    await task();
  } finally {
    if (state.busy === mine) notBusy();
  }
}

export function notBusy() {
  state.busy = false;
  delete document.body.dataset.busy;
}
