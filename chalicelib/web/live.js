/* Live suggestions: while the page is visible, ask every few seconds whether anything changed (ETag → 304). */

import { $ } from "./dom.js";
import { loadMemory } from "./memory.js";
import { state } from "./store.js";

export const POLL_MS = 5000;
let timer = 0;
let running = false;
let lastCount = null;

async function tick() {
  timer = 0;
  if (!running) return;
  if (document.visibilityState === "visible" && state.token && !state.busy) await loadMemory(true);
  schedule();
}

function schedule() {
  window.clearTimeout(timer);
  // A hidden page asks nothing; it catches up the moment it is shown again (visibilitychange).
  if (running && document.visibilityState === "visible") timer = window.setTimeout(tick, POLL_MS);
}

function onVisibility() {
  if (!running) return;
  if (document.visibilityState === "visible") {
    window.clearTimeout(timer);
    tick();
  } else {
    window.clearTimeout(timer);
    timer = 0;
  }
}

export function startLive() {
  if (running) return;
  running = true;
  document.addEventListener("visibilitychange", onVisibility);
  schedule();
}

export function stopLive() {
  running = false;
  lastCount = null; // the next account's first count is not "new"
  window.clearTimeout(timer);
  document.removeEventListener("visibilitychange", onVisibility);
}

/** The count of waiting suggestions in the tab title and on the Memory tab; a new one is announced. */
export function renderWaiting() {
  const n = state.memory ? state.memory.proposals.length : 0;
  document.title = n ? `(${n}) Memory` : "Memory";
  const badge = $("tab-badge");
  badge.textContent = String(n);
  badge.hidden = n === 0;
  $("tab-badge-words").textContent = n ? `(${n} ${n === 1 ? "suggestion" : "suggestions"} waiting)` : "";
  if (lastCount !== null && n > lastCount) {
    $("live-note").textContent = n - lastCount === 1
      ? "A new suggestion is waiting for your review."
      : `${n - lastCount} new suggestions are waiting for your review.`;
  }
  lastCount = state.token ? n : null;
}
