/* Forgetting one entry with a few seconds to undo: nothing is sent until the undo window closes. */

import { api, sendOnExit } from "./api.js";
import { $, focusNode, quoted, setText, shortText } from "./dom.js";
import { loadMemory, reportError } from "./memory.js";
import { say } from "./status.js";
import { changed, handle, on, state } from "./store.js";

export const UNDO_MS = 5000;

/** Close the window: the bar goes, and focus inside it moves to the list's heading, where Enter destroys nothing. */
function closeWindow() {
  const pending = state.pendingForget;
  window.clearTimeout(pending.timer);
  state.pendingForget = null;
  const hadFocus = $("undo-bar").contains(document.activeElement);
  $("undo-bar").hidden = true;
  $("undo-text").textContent = ""; // it quotes the entry: nothing of it stays in the page once the bar goes
  $("undo").removeAttribute("aria-label");
  if (hadFocus) focusNode($("entries-heading"));
  return pending;
}

/** Send the pending forget now (its window closed, or something bigger is about to happen). */
async function commitForget() {
  if (!state.pendingForget) return;
  const pending = closeWindow();
  state.changes += 1;
  try {
    await api("DELETE", `v1/memory/${encodeURIComponent(pending.entry.id)}`);
  } catch (err) {
    if (err.code !== "not_found") await reportError(err, "forget"); // already gone is what was asked
  }
  await loadMemory(true);
}

/** The page is going away (or signing out): send a pending forget now, so it is not silently dropped. */
function flushForget() {
  if (!state.pendingForget) return;
  const pending = closeWindow();
  sendOnExit("DELETE", `v1/memory/${encodeURIComponent(pending.entry.id)}`);
}

/** A load no longer shows the pending entry (forgotten in another tab, or everything was): nothing is left to undo. */
function withdrawIfGone() {
  const pending = state.pendingForget;
  if (pending && !(state.memory && state.memory.items.some((e) => e.id === pending.entry.id))) closeWindow();
}

async function forgetOne(entry, index) {
  await commitForget(); // an earlier forget still in its window goes now
  state.editing.delete(entry.id);
  state.pendingForget = { entry, index, timer: window.setTimeout(commitForget, UNDO_MS) };
  changed();
  setText($("undo-text"), `Forgotten: ${quoted(entry.text, 40)}. You can undo this for ${UNDO_MS / 1000} seconds.`);
  $("undo").setAttribute("aria-label", `Undo forgetting “${shortText(entry.text)}”`);
  $("undo-bar").hidden = false;
  $("undo").focus();
}

function undoForget() {
  if (!state.pendingForget) return;
  const pending = closeWindow();
  changed();
  say("Restored: nothing was forgotten.", "ok");
  // Focus goes to the restored entry itself (not its Forget button: Enter there would forget it again).
  const li = document.querySelector(`#entries li[data-entry-id="${CSS.escape(pending.entry.id)}"]`);
  focusNode(li || $("entries-heading"));
}

export function wireUndo() {
  handle("forget", forgetOne);
  handle("settleForget", commitForget); // forget-all sends a pending forget first, so its count is true
  on("loaded", withdrawIfGone);
  on("signing-out", flushForget);
  $("undo").addEventListener("click", undoForget);
  // Closing or leaving the page inside the window still forgets: the DELETE goes out as the page goes.
  window.addEventListener("pagehide", flushForget);
}
