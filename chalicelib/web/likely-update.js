/* "Looks like an update of": for a suggestion whose agent named no entry it updates, the one kept entry the page's
   word-overlap matcher (similar.js) ranks first (alone: no tie), shown on its row; accepting the row, alone or in a bulk decision,
   replaces that entry (the same request as "Replace this one"), unless the person pressed "Keep both" on the row.

   Only the entry named on the row at the moment of the click is ever replaced: the guesses are read from the rows
   on screen when the person clicks, never worked out again later. When that entry is gone by then (another tab
   forgot it, it expired), the suggestion is accepted without replacing anything, and the page says so.

   Hooks (in a proposal row): p[data-testid=likely-update][data-replaces] and its button[data-action=keep-both];
   p[data-testid=kept-both] once the person chose to keep both. */

import { api } from "./api.js";
import { el, plural, shortText, textNodes } from "./dom.js";
import { likeness, similarEntries } from "./similar.js";
import { on, visibleItems } from "./store.js";

const SHOWN_CHARS = 300; // of the entry it looks like an update of; the whole text is in memory, beside it
const keptBoth = new Set(); // ids of the suggestions the person said to keep beside what they look like updates of
on("signed-out", () => keptBoth.clear());

/** The entry a suggestion updates, as the server named it ({id, text}); anything else is no update. */
export function replacesOf(entry) {
  const r = entry.replaces;
  return r && typeof r === "object" && typeof r.id === "string" && typeof r.text === "string" ? r : null;
}

/**
 * The kept entry an unmarked suggestion most likely updates ({id, text}): the closest in wording, only when no other
 * is as close ("Likes maps" is as like "Likes tea" as "Likes coffee": no guess). Null when marked, kept both, or none.
 */
export function likelyUpdate(proposal) {
  if (proposal.replaces || keptBoth.has(proposal.id)) return null;
  const [first, second] = similarEntries(proposal.text, visibleItems());
  if (!first || (second && likeness(proposal.text, second.text) >= likeness(proposal.text, first.text))) return null;
  return first;
}

export const keepBoth = (id) => keptBoth.add(id);
export const keepsBoth = (id) => keptBoth.has(id);

/** The row's line: "Looks like an update of: <entry>. Accept replaces it." and "Keep both". `id` describes Accept. */
export function likelyUpdateLine(proposal, kept, id) {
  const chars = Array.from(kept.text);
  const shown = chars.length > SHOWN_CHARS ? `${chars.slice(0, SHOWN_CHARS).join("")}…` : kept.text;
  return el("p", { className: "update-of likely-update", attrs: { "data-testid": "likely-update", "data-replaces": kept.id } }, [
    el("span", { attrs: { id } }, [
      el("span", { className: "update-label", text: "Looks like an update of: " }),
      el("span", { className: "update-text" }, textNodes(shown)),
      el("span", { text: ". Accept replaces it; “Keep both” keeps it. " }),
    ]),
    el("button", { className: "button button-small", text: "Keep both", attrs: {
      type: "button", "data-action": "keep-both", "data-replaces": kept.id,
      "aria-label": `Keep both: accepting “${shortText(proposal.text)}” keeps “${shortText(kept.text)}” too`,
    } }),
  ]);
}

/** The note a row shows once the person pressed "Keep both" on it. */
export function keptBothLine() {
  return el("p", { className: "update-of", attrs: { "data-testid": "kept-both" },
    text: "Keeping both: Accept adds it beside what you keep." });
}

/** The entry each listed suggestion's row names as the one it looks like an update of, now: Map(proposal id -> entry id). */
export function guessesOnScreen(list) {
  const guesses = new Map();
  for (const line of list.querySelectorAll("li[data-proposal-id] [data-testid=likely-update][data-replaces]")) {
    guesses.set(line.closest("li[data-proposal-id]").getAttribute("data-proposal-id"), line.getAttribute("data-replaces"));
  }
  return guesses;
}

/**
 * Accept one suggestion, replacing `replaces` when given: "plain" (no guess), "replaced", or "unreplaced" (the entry
 * was no longer there: accepted without replacing). The accept's own error is thrown (a 404 then: no longer waiting).
 */
export async function acceptGuessed(proposalId, replaces) {
  const url = `v1/memory/${encodeURIComponent(proposalId)}/accept`;
  if (!replaces) {
    await api("POST", url);
    return "plain";
  }
  try {
    await api("POST", url, { replaces });
    return "replaced";
  } catch (err) {
    if (err.code !== "not_found") throw err; // the entry, or the suggestion itself: the plain accept below tells
  }
  await api("POST", url);
  return "unreplaced";
}

/** After a bulk accept: how many older notes were replaced, and how many guesses found their entry gone. */
export function replacedWords(replaced, unreplaced) {
  const some = replaced ? ` ${plural(replaced, "older note")} ${replaced === 1 ? "was" : "were"} replaced by ${replaced === 1 ? "its update" : "their updates"}.` : "";
  const gone = unreplaced ? ` ${plural(unreplaced, "suggestion")} ${unreplaced === 1 ? "was" : "were"} accepted without replacing anything: the entry ${unreplaced === 1 ? "it" : "each"} looked like an update of was no longer there.` : "";
  return some + gone;
}
