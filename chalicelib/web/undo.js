/* Forgetting one entry with a few seconds to undo: nothing is sent until the undo window closes. */

import { api, sendOnExit } from "./api.js";
import { $, shortText } from "./dom.js";
import { refocus } from "./entries-view.js";
import { loadMemory, reportError } from "./memory.js";
import { say } from "./status.js";
import { changed, state } from "./store.js";

export const UNDO_MS = 5000;

async function commitForget() {
  const pending = state.pendingForget;
  if (!pending) return;
  window.clearTimeout(pending.timer);
  state.pendingForget = null;
  hideUndo();
  state.changes += 1;
  try {
    await api("DELETE", `v1/memory/${encodeURIComponent(pending.entry.id)}`);
  } catch (err) {
    if (err.code !== "not_found") await reportError(err, "forget"); // already gone is what was asked
  }
  await loadMemory(true);
}

/** The page is going away (or signing out): send a pending forget now, so it is not silently dropped. */
export function flushForget() {
  const pending = state.pendingForget;
  if (!pending) return;
  window.clearTimeout(pending.timer);
  state.pendingForget = null;
  hideUndo();
  sendOnExit("DELETE", `v1/memory/${encodeURIComponent(pending.entry.id)}`);
}

export async function forgetOne(entry, index) {
  await commitForget(); // an earlier forget still in its window goes now
  state.editing.delete(entry.id);
  state.pendingForget = { entry, index, timer: window.setTimeout(commitForget, UNDO_MS) };
  changed();
  $("undo-text").textContent = `Forgotten: “${shortText(entry.text, 40)}”. You can undo this for ${UNDO_MS / 1000} seconds.`;
  $("undo").setAttribute("aria-label", `Undo forgetting “${shortText(entry.text)}”`);
  $("undo-bar").hidden = false;
  $("undo").focus();
}

function hideUndo() {
  const hadFocus = $("undo-bar").contains(document.activeElement);
  $("undo-bar").hidden = true;
  if (hadFocus) refocus(null, "forget", 0);
}

function undoForget() {
  const pending = state.pendingForget;
  if (!pending) return;
  window.clearTimeout(pending.timer);
  state.pendingForget = null;
  $("undo-bar").hidden = true;
  changed();
  say("Restored: nothing was forgotten.", "ok");
  refocus(pending.entry.id, "forget", pending.index);
}

export function wireUndo() {
  $("undo").addEventListener("click", undoForget);
  // Closing or leaving the page inside the window still forgets: the DELETE goes out as the page goes.
  window.addEventListener("pagehide", flushForget);
}
