/* The entries list: filter, edit (text, kind, expiry, pin), pin, and forget with a few seconds to undo. */

import { api } from "./api.js";
import { $, daysUntil, el, focusNode, plural, shortText } from "./dom.js";
import {
  DAYS_PROBLEM, actionButton, checkText, editFields, expiryHint, fieldOf, itemBody, parseDays, taintedWarning, toggleText,
  trackDraft,
} from "./item.js";
import { loadMemory, reportError } from "./memory.js";
import { clearFieldError, fieldError, say } from "./status.js";
import { ask, changed, filterActive, matches, run, signedInAsNow, state, visibleItems } from "./store.js";
import { describeError } from "./words.js";

function entryItem(entry) {
  const li = el("li", {
    className: `item${entry.tainted ? " item-tainted" : ""}`,
    attrs: {
      "data-testid": "entry", "data-entry-id": entry.id, "data-pinned": String(Boolean(entry.pinned)),
      "data-tainted": String(Boolean(entry.tainted)), "data-origin": entry.origin, "data-edited": String(Boolean(entry.edited)),
    },
  });
  const draft = state.editing.get(entry.id);
  if (draft) {
    if (entry.tainted) li.append(taintedWarning());
    const fields = editFields(draft, expiryHint(entry));
    li.append(el("form", { className: "edit-form", attrs: { novalidate: "", "aria-label": `Edit “${shortText(entry.text)}”`, "data-entry-id": entry.id } }, [
      ...fields.nodes,
      el("div", { className: "button-row" }, [
        el("button", { className: "button button-primary button-small", text: "Save",
          attrs: { type: "submit", "data-action": "save", "aria-label": `Save “${shortText(entry.text)}”` } }),
        actionButton("cancel", "Cancel editing", entry),
      ]),
    ]));
    return li;
  }
  li.append(...itemBody(entry, false));
  li.append(el("div", { className: "button-row" }, [
    actionButton("edit", "Edit", entry),
    actionButton("pin", entry.pinned ? "Unpin" : "Pin", entry),
    actionButton("forget", "Forget", entry, "button-danger"),
  ]));
  return li;
}

export function renderEntries() {
  if (!state.memory) { // signed out, or not loaded yet: nothing of anyone's, no empty state that would be a guess
    for (const id of ["entries", "entries-empty", "entries-no-match", "filter"]) $(id).hidden = true;
    $("entries").replaceChildren();
    $("filter-summary").textContent = "";
    return;
  }
  const all = visibleItems();
  const shown = all.filter(matches);
  const list = $("entries");
  list.replaceChildren(...shown.map(entryItem));
  list.hidden = shown.length === 0;
  $("entries-empty").hidden = all.length !== 0;
  $("entries-no-match").hidden = !(all.length && !shown.length);
  $("filter").hidden = all.length === 0 && !filterActive();
  $("filter-summary").textContent = filterActive()
    ? `Showing ${shown.length} of ${plural(all.length, "entry", "entries")}.`
    : `${plural(all.length, "entry", "entries")}.`;
}

function findEntry(id) {
  return document.querySelector(`#entries li[data-entry-id="${CSS.escape(id)}"]`);
}

function refocus(id, action, fallbackIndex) {
  const li = (id && findEntry(id)) || $("entries").children[Math.min(fallbackIndex, $("entries").children.length - 1)];
  const button = li && (li.querySelector(`[data-action="${action}"]`) || li.querySelector("[data-action]"));
  focusNode(button || $("entries-heading"));
}

function startEdit(entry) {
  const days = entry.expires_at ? String(daysUntil(entry.expires_at)) : "";
  state.editing.set(entry.id, { text: entry.text, kind: entry.kind, pinned: Boolean(entry.pinned), expiry: days, initialExpiry: days });
  changed();
  const li = findEntry(entry.id);
  focusNode(li && li.querySelector("[data-testid=edit-text]"));
}

function cancelEdit(id) {
  state.editing.delete(id);
  changed();
  refocus(id, "edit", 0);
}

function formFields(form) {
  return {
    text: [form.querySelector("[data-field=text]"), form.querySelector("[data-field=text] ~ .field-error")],
    expiry: [form.querySelector("[data-field=expiry]"), form.querySelector("[data-field=expiry] ~ .field-error")],
  };
}

async function saveEdit(entry, form) {
  const draft = state.editing.get(entry.id);
  if (!draft) return;
  const fields = formFields(form);
  const patch = {};
  if (draft.text !== entry.text) {
    const problem = checkText(draft.text);
    if (problem) return fieldError(...fields.text, problem, "invalid_request");
    patch.text = draft.text;
  }
  if (draft.kind !== entry.kind) patch.kind = draft.kind;
  if (draft.pinned !== Boolean(entry.pinned)) patch.pinned = draft.pinned;
  if (draft.expiry.trim() !== draft.initialExpiry) {
    const days = parseDays(draft.expiry);
    if (Number.isNaN(days)) return fieldError(...fields.expiry, DAYS_PROBLEM, "invalid_request");
    patch.expires_in_days = days; // null removes the expiry
  }
  if (Object.keys(patch).length === 0) {
    say("Nothing changed.", "info");
    return cancelEdit(entry.id);
  }
  const still = signedInAsNow();
  try {
    await api("PATCH", `v1/memory/${encodeURIComponent(entry.id)}`, patch);
    state.editing.delete(entry.id);
    say("Saved.", "ok");
    await loadMemory(true);
    if (still()) refocus(entry.id, "edit", 0); // signed out meanwhile: the next person's focus stays where it is
  } catch (err) {
    const field = fieldOf(err);
    if (field) fieldError(...fields[field], describeError(err, "edit"), err.code);
    else await reportError(err, "edit");
  }
}

async function togglePin(entry) {
  const still = signedInAsNow();
  try {
    await api("PATCH", `v1/memory/${encodeURIComponent(entry.id)}`, { pinned: !entry.pinned });
    say(entry.pinned ? "Unpinned." : "Pinned to the top.", "ok");
    await loadMemory(true);
    if (still()) refocus(entry.id, "pin", 0);
  } catch (err) {
    await reportError(err, "edit");
  }
}

/* ---- events ---- */

function entryOf(node) {
  const li = node && node.closest("li[data-entry-id]");
  const id = li && li.getAttribute("data-entry-id");
  return { li, entry: id && state.memory && state.memory.items.find((e) => e.id === id) };
}

function onClick(event) {
  const button = event.target.closest("button[data-action]");
  const { li, entry } = entryOf(button);
  if (!entry) return;
  const index = [...$("entries").children].indexOf(li);
  const action = button.getAttribute("data-action");
  if (action === "expand") toggleText(entry.id);
  else if (action === "edit") startEdit(entry);
  else if (action === "cancel") cancelEdit(entry.id);
  else if (action === "pin") run(() => togglePin(entry));
  else if (action === "forget") run(() => ask("forget", entry, index)); // undo.js holds it for its window
}

function onSubmit(event) {
  const form = event.target.closest("form[data-entry-id]");
  if (!form) return;
  event.preventDefault();
  const { entry } = entryOf(form);
  if (entry) run(() => saveEdit(entry, form));
}

function onInput(event) {
  const form = event.target.closest("form[data-entry-id]");
  const draft = form && state.editing.get(form.getAttribute("data-entry-id"));
  if (!draft) return;
  trackDraft(event, draft);
  const slot = event.target.parentElement.querySelector(".field-error");
  clearFieldError(event.target, slot);
}

function onKeydown(event) {
  const form = event.key === "Escape" && event.target.closest("form[data-entry-id]");
  if (form) {
    event.preventDefault();
    cancelEdit(form.getAttribute("data-entry-id"));
  }
}

export function wireEntries() {
  const list = $("entries");
  list.addEventListener("click", onClick);
  list.addEventListener("submit", onSubmit);
  list.addEventListener("input", onInput);
  list.addEventListener("change", onInput);
  list.addEventListener("keydown", onKeydown);
}
