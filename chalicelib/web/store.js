/* The page's state in one place, and the rule that only one change is in flight at a time. */

export const DEFAULT_LIMITS = { entries: 200, proposals: 50, bytes_per_entry: 2000 };

export const state = {
  config: null,
  token: null,
  user: null,
  memory: null, // {enabled, items, proposals, limits} as GET /v1/memory last said
  agents: null, // GET /v1/agents's rows, once the Agents tab was opened
  etag: null, // the ETag of that answer: polls send it back and get 304 while nothing changed
  editing: new Map(), // entry id -> draft {text, kind, pinned, expiry, initialExpiry}
  correcting: new Map(), // proposal id -> draft {text, kind, pinned, expiry}
  pendingForget: null, // {entry, timer}: hidden now, deleted when the undo window closes
  filter: { text: "", kind: "", origin: "", tainted: false },
  busy: false,
  changes: 0, // bumped by every change, so an older load never paints over a newer state
};

export function limits() {
  return (state.memory && state.memory.limits) || DEFAULT_LIMITS;
}

const listeners = [];
/** Views register here; `changed()` re-renders them all from `state`. */
export function onChange(listener) {
  listeners.push(listener);
}
export function changed() {
  for (const listener of listeners) listener();
}

const beforeActions = [];
/** Called when the person starts something new (clears old status messages). */
export function onAction(hook) {
  beforeActions.push(hook);
}

export async function run(task) {
  // One change at a time: a double click must not send the same request twice.
  if (state.busy) return;
  for (const hook of beforeActions) hook();
  state.busy = true;
  state.changes += 1;
  document.body.dataset.busy = "true"; // a hook for tests; aria-busy would mute the status line
  try {
    await task();
  } finally {
    state.busy = false;
    delete document.body.dataset.busy;
  }
}
