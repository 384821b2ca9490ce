/* The "Your data" card: export everything as JSON, and forget everything behind a dialog that counts. */

import { api } from "./api.js";
import { $, el, plural } from "./dom.js";
import { loadMemory, reportError } from "./memory.js";
import { say } from "./status.js";
import { ask, on, run, signedInAsNow, state } from "./store.js";

export async function openForgetAll() {
  // A forget still in its undo window goes now: the count below is then what the server holds, the
  // undo bar closes, and no Undo can later claim to restore what forget-all deleted.
  const still = signedInAsNow(); // every answer below is this person's: after sign-out it says nothing
  await ask("settleForget");
  await loadMemory(true);
  if (!still()) return;
  const mem = state.memory || { items: [], proposals: [] };
  const text = $("forget-all-text");
  text.dataset.entries = String(mem.items.length);
  text.dataset.proposals = String(mem.proposals.length);
  text.textContent = `This will forget ${plural(mem.items.length, "entry", "entries")} and ` +
    `${plural(mem.proposals.length, "suggestion")} waiting for review.`;
  const dialog = $("forget-all-dialog");
  if (typeof dialog.showModal === "function") dialog.showModal();
  else dialog.setAttribute("open", "");
  $("forget-all-cancel").focus();
}

/** Signed out (a 401 can arrive while the dialog is open): its counts were the previous person's. */
export function wireDialogs() {
  on("signed-out", () => {
    const dialog = $("forget-all-dialog");
    if (dialog.open && typeof dialog.close === "function") dialog.close();
    dialog.removeAttribute("open");
    $("forget-all-text").textContent = "";
  });
}

export function closeForgetAll() {
  const dialog = $("forget-all-dialog");
  if (typeof dialog.close === "function") dialog.close();
  else dialog.removeAttribute("open");
  $("forget-all").focus();
}

export async function confirmForgetAll() {
  const still = signedInAsNow();
  await run(async () => {
    try {
      const data = await api("DELETE", "v1/memory");
      const n = data && typeof data.deleted === "number" ? data.deleted : 0;
      closeForgetAll();
      say(`Forgot everything: ${plural(n, "item")} removed. Memory stays ${state.memory && state.memory.enabled ? "on" : "off"}.`, "ok");
      state.editing.clear();
      state.correcting.clear();
      await loadMemory(true);
    } catch (err) {
      if (!still()) return;
      closeForgetAll();
      await reportError(err, "forget_all");
    }
  });
}

/* ---------- export ---------- */

export async function exportAll() {
  try {
    const data = await api("GET", "v1/memory/export"); // landing after sign-out, it throws (api.js): no download
    const blob = new Blob([JSON.stringify(data, null, 2)], { type: "application/json" });
    const url = URL.createObjectURL(blob);
    const link = el("a", { attrs: { href: url, download: `memory-export-${new Date().toISOString().slice(0, 10)}.json` } });
    link.hidden = true;
    document.body.append(link);
    link.click();
    link.remove();
    // Give the browser time to start the download before the object URL goes away.
    window.setTimeout(() => URL.revokeObjectURL(url), 10000);
    say("Export downloaded.", "ok");
  } catch (err) {
    await reportError(err, "export");
  }
}
