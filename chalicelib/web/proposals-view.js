/* Suggestions waiting for review: accept as is, edit and accept, or reject. Disabled (with the reason) while memory is off. */

import { api } from "./api.js";
import { $, el, focusNode, keepingFocus, nextId, shortText, textNodes } from "./dom.js";
import { DAYS_PROBLEM, actionButton, checkText, editFields, fieldOf, itemBody, parseDays, toggleText, trackDraft } from "./item.js";
import { loadMemory, reportError } from "./memory.js";
import { clearFieldError, fieldError, say } from "./status.js";
import { ask, changed, on, run, signedInAsNow, state, visibleItems } from "./store.js";
import { similarEntries } from "./similar.js";
import { describeError } from "./words.js";

/** What a button that takes the suggestion in is described by: memory being off, and the taint warning. */
const describedBy = (off, taintId) => [off ? "proposals-off-note" : null, taintId].filter(Boolean).join(" ") || null;

/** "Like what you keep": the entries closest in wording (similar.js, on the page), each with "Replace this one". */
function likeWhatYouKeep(entry, off, taintId) {
  const like = similarEntries(entry.text, visibleItems()); // not one waiting out its undo window
  if (!like.length) return null;
  const headingId = `similar-${entry.id}`;
  return el("div", { className: "similar", attrs: { "data-testid": "similar" } }, [
    el("p", { className: "similar-heading", text: like.length === 1 ? "Like this entry you keep:" : "Like these entries you keep:", attrs: { id: headingId } }),
    el("ul", { className: "similar-list", attrs: { "aria-labelledby": headingId } }, like.map((kept) => el("li", {
      className: "similar-item", attrs: { "data-testid": "similar-entry", "data-entry-id": kept.id },
    }, [
      el("span", { className: "similar-text" }, textNodes(kept.text)),
      el("button", { className: "button button-small", text: "Replace this one", attrs: {
        type: "button", "data-action": "replace", "data-replaces": kept.id, disabled: off,
        "aria-describedby": describedBy(off, taintId),
        "aria-label": `Replace this one: accept “${shortText(entry.text)}” and forget “${shortText(kept.text)}”`,
      } }),
    ]))),
  ]);
}

function proposalItem(entry) {
  const off = !state.memory.enabled;
  const li = el("li", {
    className: `item${entry.tainted ? " item-tainted" : ""}`,
    attrs: { "data-testid": "proposal", "data-proposal-id": entry.id, "data-tainted": String(Boolean(entry.tainted)), "data-origin": entry.origin },
  });
  const taintId = entry.tainted ? nextId("taint") : null;
  li.append(...itemBody(entry, true, taintId));
  const draft = state.correcting.get(entry.id);
  if (draft) {
    const fields = editFields(draft, "Empty: keep until you forget it.");
    li.append(el("form", { className: "edit-form", attrs: { novalidate: "", "aria-label": `Edit and accept “${shortText(entry.text)}”`, "data-proposal-id": entry.id } }, [
      ...fields.nodes,
      el("div", { className: "button-row" }, [
        el("button", { className: "button button-primary button-small", text: "Accept with changes",
          attrs: { type: "submit", "data-action": "accept-changes", "aria-label": `Accept with changes “${shortText(entry.text)}”`,
            disabled: off, "aria-describedby": describedBy(off, taintId) } }),
        actionButton("cancel", "Cancel editing", entry),
      ]),
    ]));
    return li;
  }
  const buttons = [
    actionButton("accept", "Accept", entry, "button-primary"),
    actionButton("correct", "Edit and accept", entry),
    actionButton("reject", "Reject", entry),
  ];
  for (const button of buttons.slice(0, 2)) {
    button.disabled = off;
    const description = describedBy(off, taintId);
    if (description) button.setAttribute("aria-describedby", description);
  }
  li.append(el("div", { className: "button-row" }, buttons));
  const like = likeWhatYouKeep(entry, off, taintId);
  if (like) li.append(like);
  return li;
}

export function renderProposals() {
  if (!state.memory) {
    for (const id of ["proposals", "proposals-empty", "proposals-off-note", "proposals-filter", "proposals-none-tainted"]) $(id).hidden = true;
    $("proposals").replaceChildren();
    return;
  }
  const proposals = state.memory.proposals;
  const onlyTainted = state.proposalFilter.tainted;
  const shown = onlyTainted ? proposals.filter((p) => p.tainted) : proposals;
  const list = $("proposals");
  list.replaceChildren(...shown.map(proposalItem));
  list.hidden = shown.length === 0;
  $("proposals-empty").hidden = proposals.length !== 0;
  $("proposals-none-tainted").hidden = !(onlyTainted && proposals.length && !shown.length);
  $("proposals-filter").hidden = proposals.length === 0 && !onlyTainted;
  $("proposals-only-tainted").checked = onlyTainted;
  $("proposals-off-note").hidden = state.memory.enabled || proposals.length === 0;
}

/**
 * After a decision, focus goes to the next suggestion's same button, so deciding one after another stays quick;
 * but never to a tainted one's Accept: a second Enter must not take in what came from untrusted content. There
 * focus goes to the suggestion itself, where its warning is read first and Enter does nothing.
 */
function refocus(id, action, index) {
  const items = $("proposals").children;
  const li = (id && document.querySelector(`#proposals li[data-proposal-id="${CSS.escape(id)}"]`)) || items[Math.min(index, items.length - 1)];
  if (li && action === "accept" && li.getAttribute("data-tainted") === "true") return focusNode(li);
  const button = li && (li.querySelector(`[data-action="${action}"]:not([disabled])`) || li.querySelector("[data-action]:not([disabled])"));
  focusNode(button || $("proposals-heading"));
}

async function decide(entry, verdict, index, body) {
  const still = signedInAsNow();
  try {
    await api("POST", `v1/memory/${encodeURIComponent(entry.id)}/${verdict}`, body);
    state.correcting.delete(entry.id);
    say(verdict !== "accept" ? "Rejected: the suggestion was deleted."
      : body && body.replaces ? "Accepted: it is now in your memory, in place of the entry it replaces."
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
  const index = [...$("proposals").children].indexOf(li);
  const action = button.getAttribute("data-action");
  if (action === "expand") toggleText(entry.id);
  else if (action === "correct") startCorrecting(entry);
  else if (action === "cancel") stopCorrecting(entry.id);
  else if (action === "accept" || action === "reject" || action === "replace") {
    const body = action === "replace" ? { replaces: button.getAttribute("data-replaces") } : undefined;
    run(async () => {
      if (action !== "reject") await ask("settleForget"); // a forget in its undo window still counts: it goes first
      const err = await decide(entry, action === "reject" ? "reject" : "accept", index, body);
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
  if (entry && state.memory.enabled) run(() => acceptCorrected(entry, form, [...$("proposals").children].indexOf(li)));
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
