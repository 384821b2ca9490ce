/*
 * One waiting suggestion as a compact row: the taint mark, its kind, its text, "Update of: <entry>" when the agent
 * said what it updates ("Looks like an update of: <entry>" and "Keep both" when it did not but one entry is close in
 * wording: likely-update.js), and Accept / Edit / Reject; where it came from (and its ids) behind "Details", the edit
 * form on "Edit". Entries close in wording are offered "Replace this one" when the agent named none (similar.js).
 *
 * Hooks (in li[data-testid=proposal][data-proposal-id]): [data-testid=kind|tainted|text|update-of|likely-update|
 * kept-both|details|origin|source|similar|similar-entry], button[data-action=accept|correct|reject|details|replace|
 * keep-both|accept-changes|cancel].
 */

import { el, nextId, shortText, textNodes, timeEl } from "./dom.js";
import { actionButton, editFields, idsDisclosure, itemText, metaRow, sourceLine } from "./item.js";
import { keepsBoth, keptBothLine, likelyUpdate, likelyUpdateLine, replacesOf } from "./likely-update.js";
import { similarEntries } from "./similar.js";
import { state, visibleItems } from "./store.js";
import { KIND_LABELS, originWords } from "./words.js";

const described = (...ids) => ids.filter(Boolean).join(" ") || null;
const UPDATE_CHARS = 300; // of the entry it updates, shown in the row; the whole text is under "Details"

/** "Like what you keep": the entries closest in wording (similar.js, on the page), each with "Replace this one";
    not the one the row already names as what it looks like an update of (`guess`). */
function likeWhatYouKeep(entry, off, describedBy, guess) {
  const like = similarEntries(entry.text, visibleItems()).filter((kept) => !guess || kept.id !== guess.id); // not one waiting out its undo window
  if (!like.length) return null;
  const headingId = `similar-${entry.id}`;
  return el("div", { className: "similar", attrs: { "data-testid": "similar" } }, [
    el("p", { className: "similar-heading", text: like.length === 1 ? "Like this entry you keep:" : "Like these entries you keep:", attrs: { id: headingId } }),
    el("ul", { className: "similar-list", attrs: { "aria-labelledby": headingId } }, like.map((kept) => el("li", {
      className: "similar-item", attrs: { "data-testid": "similar-entry", "data-entry-id": kept.id },
    }, [
      el("span", { className: "similar-text" }, textNodes(kept.text)),
      el("button", { className: "button button-small", text: "Replace this one", attrs: {
        type: "button", "data-action": "replace", "data-replaces": kept.id, disabled: off, "aria-describedby": describedBy,
        "aria-label": `Replace this one: accept “${shortText(entry.text)}” and forget “${shortText(kept.text)}”`,
      } }),
    ]))),
  ]);
}

function updateOf(replaces, id) {
  const chars = Array.from(replaces.text);
  const shown = chars.length > UPDATE_CHARS ? `${chars.slice(0, UPDATE_CHARS).join("")}…` : replaces.text;
  return el("p", { className: "update-of", attrs: { id, "data-testid": "update-of", "data-replaces": replaces.id } }, [
    el("span", { className: "update-label", text: "Update of: " }),
    el("span", { className: "update-text" }, textNodes(shown)),
  ]);
}

/** The row's taint mark: a badge to the eye (its conversation's header says it in full), the whole warning to a screen reader. */
function taintMark(id) {
  return el("span", { className: "badge badge-tainted", attrs: { "data-testid": "tainted", id } }, [
    el("span", { text: "⚠ Tainted", attrs: { "aria-hidden": "true" } }),
    el("span", { className: "visually-hidden", text: "Tainted: it came from a conversation that read untrusted content. Check it before you rely on it." }),
  ]);
}

function detailsOf(entry, replaces, id, open) {
  return el("div", { className: "row-details", attrs: { id, "data-testid": "details", hidden: !open } }, [
    el("dl", { className: "meta" }, [
      ...metaRow("From", el("span", { text: originWords(entry, true), attrs: { "data-testid": "origin" } })),
      ...metaRow("Source", el("span", {}, [sourceLine(entry), idsDisclosure(entry)])),
      ...metaRow("Suggested", timeEl(entry.created_at, "created")),
      ...(replaces ? metaRow("Updates", el("span", { className: "update-text" }, textNodes(replaces.text))) : []),
    ]),
  ]);
}

function editForm(entry, draft, off, describedBy) {
  const fields = editFields(draft, "Empty: keep until you forget it.");
  return el("form", { className: "edit-form", attrs: { novalidate: "", "aria-label": `Edit and accept “${shortText(entry.text)}”`, "data-proposal-id": entry.id } }, [
    ...fields.nodes,
    el("div", { className: "button-row" }, [
      el("button", { className: "button button-primary button-small", text: "Accept with changes",
        attrs: { type: "submit", "data-action": "accept-changes", "aria-label": `Accept with changes “${shortText(entry.text)}”`,
          disabled: off, "aria-describedby": describedBy } }),
      actionButton("cancel", "Cancel editing", entry),
    ]),
  ]);
}

function decisions(entry, off, describedBy, detailsId, open, guess) {
  const accept = actionButton("accept", "Accept", entry, "button-primary");
  if (guess) accept.setAttribute("aria-label", `Accept “${shortText(entry.text)}” in place of “${shortText(guess.text)}”`);
  const edit = el("button", { className: "button button-small", text: "Edit",
    attrs: { type: "button", "data-action": "correct", "aria-label": `Edit and accept “${shortText(entry.text)}”` } });
  for (const button of [accept, edit]) {
    button.disabled = off;
    if (describedBy) button.setAttribute("aria-describedby", describedBy);
  }
  const details = el("button", { className: "button button-small button-quiet", text: "Details", attrs: {
    type: "button", "data-action": "details", "aria-expanded": String(open), "aria-controls": detailsId,
    "aria-label": `Details of “${shortText(entry.text)}”` } });
  return el("div", { className: "row-buttons" }, [accept, edit, actionButton("reject", "Reject", entry), details]);
}

/** A suggestion's row. Buttons that take it in are described by memory being off, what it updates, and its taint. */
export function proposalRow(entry) {
  const off = !state.memory.enabled;
  const li = el("li", {
    className: `item row${entry.tainted ? " item-tainted" : ""}`,
    attrs: { "data-testid": "proposal", "data-proposal-id": entry.id, "data-tainted": String(Boolean(entry.tainted)), "data-origin": entry.origin },
  });
  const replaces = replacesOf(entry);
  const draft = state.correcting.get(entry.id);
  const guess = draft ? null : likelyUpdate(entry); // what Accept replaces when the agent named nothing (likely-update.js)
  const [taintId, updateId, detailsId] = [entry.tainted ? nextId("taint") : null, replaces || guess ? nextId("update") : null, nextId("details")];
  const describedBy = described(off ? "proposals-off-note" : null, updateId, taintId);
  const open = state.details.has(entry.id);
  const [text, expand] = itemText(entry);
  const kind = el("span", { className: "badge", text: KIND_LABELS[entry.kind] || entry.kind, attrs: { "data-testid": "kind" } });
  li.append(...[
    el("div", { className: "row-line" }, [kind, taintId ? taintMark(taintId) : null, text,
      draft ? null : decisions(entry, off, describedBy, detailsId, open, guess)]),
    expand || null,
    replaces ? updateOf(replaces, updateId) : null,
    guess ? likelyUpdateLine(entry, guess, updateId) : null,
    !draft && !replaces && !guess && keepsBoth(entry.id) ? keptBothLine() : null,
    draft ? editForm(entry, draft, off, describedBy) : null,
    draft || replaces ? null : likeWhatYouKeep(entry, off, describedBy, guess),
    detailsOf(entry, replaces, detailsId, open),
  ].filter(Boolean));
  return li;
}
