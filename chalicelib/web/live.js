/*
 * Live suggestions: while the page is visible it asks whether anything changed (ETag → 304), as often
 * as the server advises. GET /v1/memory's `poll` says {every_seconds, for_seconds, then_every_seconds}:
 * every 5 s for the few minutes after a suggestion arrived or memory was turned on (an agent is
 * likely at work), every 60 s otherwise. The advice comes with a 200 and holds for as long as its
 * view does, so a 304 keeps it; the window is counted on this page's clock, never the server's.
 */

import { $ } from "./dom.js";
import { loadMemory } from "./memory.js";
import { emit, on, state } from "./store.js";

export const SLOW_MS = 60_000; // no advice (an older server), or advice that makes no sense
const FLOOR_MS = 5_000; // however the server is answered, no tab asks more often than this
const CEILING_MS = 3_600_000;
let timer = 0;
let running = false;
let lastCount = null;

function seconds(value, fallbackMs) {
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? Math.min(CEILING_MS, Math.max(FLOOR_MS, n * 1000)) : fallbackMs;
}

/** The server's advice as this page's own schedule: ask every `every` ms until `until`, then every `then` ms. */
export function planFrom(advice, now = Date.now()) {
  const poll = advice && typeof advice === "object" ? advice : {};
  const span = Number(poll.for_seconds);
  return {
    every: seconds(poll.every_seconds, SLOW_MS),
    until: now + (Number.isFinite(span) && span > 0 ? Math.min(span, 3600) * 1000 : 0),
    then: seconds(poll.then_every_seconds, SLOW_MS),
  };
}

/** How long to wait before the next question. */
export function nextDelay(plan, now = Date.now()) {
  if (!plan) return SLOW_MS;
  return now < plan.until ? Math.min(plan.every, Math.max(FLOOR_MS, plan.until - now)) : plan.then;
}

async function tick() {
  timer = 0;
  if (!running) return;
  if (document.visibilityState === "visible" && state.token && !state.busy) {
    await loadMemory(true);
    emit("polled"); // journal-view.js refreshes while it is shown; relative times are redrawn
  }
  schedule();
}

function schedule() {
  window.clearTimeout(timer);
  timer = 0;
  // A hidden page asks nothing; it catches up the moment it is shown again (visibilitychange).
  if (running && document.visibilityState === "visible") timer = window.setTimeout(tick, nextDelay(state.poll));
}

function onAnswer(answer) {
  if (!answer.changed) return; // a 304: the view is the one the advice was given for
  state.poll = planFrom(answer.data && answer.data.poll);
  if (running && timer) schedule(); // faster advice takes effect now, not after the old, longer wait
}

function onVisibility() {
  if (!running) return;
  window.clearTimeout(timer);
  timer = 0;
  if (document.visibilityState === "visible") tick();
}

function startLive() {
  if (running) return;
  running = true;
  document.addEventListener("visibilitychange", onVisibility);
  schedule();
}

function stopLive() {
  running = false;
  lastCount = null; // the next account's first count is not "new"
  window.clearTimeout(timer);
  timer = 0;
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
  if (!state.memory) $("live-note").textContent = "";
  else if (lastCount !== null && n > lastCount) {
    $("live-note").textContent = n - lastCount === 1
      ? "A new suggestion is waiting for your review."
      : `${n - lastCount} new suggestions are waiting for your review.`;
  }
  lastCount = state.memory ? n : null;
}

export function wireLive() {
  on("answered", onAnswer);
  on("signed-in", startLive);
  on("signing-out", stopLive);
}
