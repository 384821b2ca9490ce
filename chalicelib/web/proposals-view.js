/* Suggestions waiting for review, grouped by conversation: accept as is, edit and accept, or reject. Disabled (with the reason) while memory is off. */

import { api } from "./api.js";
import { $, focusNode, keepingFocus } from "./dom.js";
import { DAYS_PROBLEM, checkText, fieldOf, parseDays, toggleText, trackDraft } from "./item.js";
import { loadMemory, reportError } from "./memory.js";
import { acceptGuessed, keepBoth, replacesOf } from "./likely-update.js";
import { proposalRow } from "./proposal-row.js";
import { groupItem, groupsOf, shownProposals } from "./review-groups.js";
import { clearFieldError, fieldError, say } from "./status.js";
import { ask, changed, on, run, signedInAsNow, state } from "./store.js";
import { describeError } from "./words.js";

export function renderProposals() {
  if (!state.memory) {
    for (const id of ["proposals", "proposals-empty", "proposals-off-note", "proposals-filter", "proposals-none-tainted"]) $(id).hidden = true;
    $("proposals").replaceChildren();
    return;
  }
  const proposals = state.memory.proposals;
  const onlyTainted = state.proposalFilter.tainted;
  const shown = shownProposals();
  const list = $("proposals");
  // One group per conversation, its decisions above its rows (review-groups.js, proposal-row.js).
  list.replaceChildren(...groupsOf(shown).map((group) => groupItem(group, group.proposals.map(proposalRow))));
  list.hidden = shown.length === 0;
  $("proposals-empty").hidden = proposals.length !== 0;
  $("proposals-none-tainted").hidden = !(onlyTainted && proposals.length && !shown.length);
  $("proposals-filter").hidden = proposals.length === 0 && !onlyTainted;
  $("proposals-only-tainted").checked = onlyTainted;
  $("proposals-off-note").hidden = state.memory.enabled || proposals.length === 0;
}

const rows = () => [...$("proposals").querySelectorAll("li[data-proposal-id]")];

/**
 * After a decision, focus goes to the next suggestion's same button, so deciding one after another stays quick;
 * but never to a tainted one's Accept: a second Enter must not take in what came from untrusted content. There
 * focus goes to the suggestion itself, where its warning is read first and Enter does nothing.
 */
function refocus(id, action, index) {
  const items = rows();
  const li = (id && document.querySelector(`#proposals li[data-proposal-id="${CSS.escape(id)}"]`)) || items[Math.min(index, items.length - 1)];
  if (li && action === "accept" && li.getAttribute("data-tainted") === "true") return focusNode(li);
  const button = li && (li.querySelector(`[data-action="${action}"]:not([disabled])`) || li.querySelector("[data-action]:not([disabled])"));
  focusNode(button || $("proposals-heading"));
}

/** `guess`: the entry the row named as the one it looks like an update of when Accept was clicked (likely-update.js). */
async function decide(entry, verdict, index, body, guess) {
  const still = signedInAsNow();
  try {
    const how = guess ? await acceptGuessed(entry.id, guess) : await api("POST", `v1/memory/${encodeURIComponent(entry.id)}/${verdict}`, body);
    state.correcting.delete(entry.id);
    say(verdict !== "accept" ? "Rejected: the suggestion was deleted."
      : how === "unreplaced" ? "Accepted: it is now in your memory. The entry it looked like an update of was no longer there, so nothing was replaced."
      : (body && body.replaces) || how === "replaced" || (!body && replacesOf(entry)) ? "Accepted: it is now in your memory, in place of the entry it replaces."
      : body ? "Accepted with your changes: it is now in your memory." : "Accepted: it is now in your memory.", "ok");
    await loadMemory(true);
    if (still()) refocus(null, verdict, index); // signed out meanwhile: the next person's focus stays
    return null;
  } catch (err) {
    return err;
  }
}

async function acceptCorrected(entry, form, index) {
  const draft = state.correcting.get(entry.id);
  const text = [form.querySelector("[data-field=text]"), form.querySelector("[data-field=text] ~ .field-error")];
  const expiry = [form.querySelector("[data-field=expiry]"), form.querySelector("[data-field=expiry] ~ .field-error")];
  const problem = checkText(draft.text);
  if (problem) return fieldError(...text, problem, "invalid_request");
  const days = parseDays(draft.expiry);
  if (Number.isNaN(days)) return fieldError(...expiry, DAYS_PROBLEM, "invalid_request");
  const body = { text: draft.text, kind: draft.kind, pinned: draft.pinned };
  if (days !== null) body.expires_in_days = days;
  await ask("settleForget"); // a forget in its undo window still counts against the cap: it goes first
  const err = await decide(entry, "accept", index, body);
  if (!err) return;
  const field = fieldOf(err);
  if (field) fieldError(...(field === "text" ? text : expiry), describeError(err, "accept"), err.code);
  else await reportError(err, "accept");
}

function startCorrecting(entry) {
  state.correcting.set(entry.id, { text: entry.text, kind: entry.kind, pinned: false, expiry: "" });
  changed();
  const li = document.querySelector(`#proposals li[data-proposal-id="${CSS.escape(entry.id)}"]`);
  focusNode(li && li.querySelector("[data-testid=edit-text]"));
}

/** Where a suggestion came from, its ids and the whole text it updates: shown on demand, kept across redraws. */
function toggleDetails(id) {
  if (state.details.has(id)) state.details.delete(id);
  else state.details.add(id);
  changed();
}

/** "Keep both": this row's Accept (alone or in a bulk decision) no longer replaces what it looks like an update of. */
function keepBothOn(id) {
  keepBoth(id);
  changed();
  const li = document.querySelector(`#proposals li[data-proposal-id="${CSS.escape(id)}"]`); // drawn again: read the note
  focusNode((li && li.querySelector("[data-testid=kept-both]")) || li);
}

function stopCorrecting(id) {
  state.correcting.delete(id);
  changed();
  refocus(id, "correct", 0);
}

function proposalOf(node) {
  const li = node && node.closest("li[data-proposal-id]");
  const id = li && li.getAttribute("data-proposal-id");
  return { li, entry: id && state.memory && state.memory.proposals.find((p) => p.id === id) };
}

function onClick(event) {
  const button = event.target.closest("button[data-action]");
  const { li, entry } = proposalOf(button);
  if (!entry) return;
  const index = rows().indexOf(li);
  const action = button.getAttribute("data-action");
  if (action === "expand") toggleText(entry.id);
  else if (action === "details") toggleDetails(entry.id);
  else if (action === "correct") startCorrecting(entry);
  else if (action === "cancel") stopCorrecting(entry.id);
  else if (action === "keep-both") keepBothOn(entry.id);
  else if (action === "accept" || action === "reject" || action === "replace") {
    const body = action === "replace" ? { replaces: button.getAttribute("data-replaces") } : undefined;
    const line = action === "accept" && li.querySelector("[data-testid=likely-update][data-replaces]"); // as shown now
    run(async () => {
      if (action !== "reject") await ask("settleForget"); // a forget in its undo window still counts: it goes first
      const err = await decide(entry, action === "reject" ? "reject" : "accept", index, body, line ? line.getAttribute("data-replaces") : null);
      if (err) await reportError(err, action === "reject" ? "reject" : "accept");
      // A 404 to a replace may be the entry, not the suggestion: say which, once the list is fresh.
      if (err && err.code === "not_found" && body && state.memory && state.memory.proposals.some((p) => p.id === entry.id)) {
        say("The entry it was to replace no longer exists (forgotten in another tab, or expired). The suggestion is still waiting.", "error", err.code);
      }
    });
  }
}

function onSubmit(event) {
  const form = event.target.closest("form[data-proposal-id]");
  if (!form) return;
  event.preventDefault();
  const { li, entry } = proposalOf(form);
  if (entry && state.memory.enabled) run(() => acceptCorrected(entry, form, rows().indexOf(li)));
}

function onInput(event) {
  const form = event.target.closest("form[data-proposal-id]");
  const draft = form && state.correcting.get(form.getAttribute("data-proposal-id"));
  if (!draft) return;
  trackDraft(event, draft);
  clearFieldError(event.target, event.target.parentElement.querySelector(".field-error"));
}

function onKeydown(event) {
  const form = event.key === "Escape" && event.target.closest("form[data-proposal-id]");
  if (form) {
    event.preventDefault();
    stopCorrecting(form.getAttribute("data-proposal-id"));
  }
}

/** "Only tainted suggestions": it filters this list alone, so only this list is drawn again. */
function onFilter() {
  state.proposalFilter = { tainted: $("proposals-only-tainted").checked };
  keepingFocus(renderProposals);
}

export function wireProposals() {
  $("proposals-only-tainted").addEventListener("change", onFilter);
  on("signed-out", () => { $("proposals-only-tainted").checked = false; });
  const list = $("proposals");
  list.addEventListener("click", onClick);
  list.addEventListener("submit", onSubmit);
  list.addEventListener("input", onInput);
  list.addEventListener("change", onInput);
  list.addEventListener("keydown", onKeydown);
}
