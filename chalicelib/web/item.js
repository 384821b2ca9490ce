/* What an entry and a suggestion look like (they share a shape), and the fields of the two edit forms. */

import { byteLength, daysUntil, el, formatDate, nextId, plural, shortText, textNodes, timeEl, withoutMarked } from "./dom.js";
import { errorSlot } from "./status.js";
import { changed, limits, state } from "./store.js";
import { KIND_LABELS, ago, originWords, sourceIds, sourcePrefix } from "./words.js";

/** The warning on a tainted entry or suggestion; `id` lets its buttons name it as their description. */
export function taintedWarning(id) {
  return el("p", { className: "tainted", attrs: { "data-testid": "tainted", id } }, [
    el("span", { className: "tainted-icon", text: "⚠", attrs: { "aria-hidden": "true" } }),
    el("span", {}, [
      el("strong", { text: "Tainted: " }),
      "it came from a session that read untrusted content (such as a web page or an email). Check it before you rely on it.",
    ]),
  ]);
}

/** A button whose accessible name says which entry it acts on: "Forget “Likes tea”". */
export function actionButton(action, label, entry, extraClass) {
  return el("button", {
    className: `button button-small${extraClass ? " " + extraClass : ""}`,
    text: label,
    attrs: { type: "button", "data-action": action, "aria-label": `${label} “${shortText(entry.text)}”` },
  });
}

export function metaRow(label, value) {
  return [el("dt", { text: label }), el("dd", {}, [value])];
}

export function idsDisclosure(entry) {
  const ids = sourceIds(entry);
  if (!ids.length) return null;
  return el("details", { className: "ids-details" }, [
    el("summary", { text: "Ids" }),
    el("dl", { className: "ids" }, ids.flatMap(([label, value]) => metaRow(label, el("span", { text: value })))),
  ]);
}

/** "Forget everything from this conversation", on what an agent suggested in a known session (agents-view.js acts on it). */
function conversationButton(entry) {
  if (entry.origin !== "agent" || !entry.agent || !(entry.source && entry.source.session_id)) return null;
  return el("button", {
    className: "button button-small button-quiet conversation-forget",
    text: "Forget everything from this conversation",
    attrs: { type: "button", "data-action": "forget-conversation",
      "aria-label": `Forget everything from this conversation “${shortText(entry.text)}”` },
  });
}

/** "From memory-agent, in a conversation, 3 minutes ago": the moment redraws itself (refreshTimes). */
export function sourceLine(entry) {
  const prefix = sourcePrefix(entry);
  if (prefix === null) return el("span", { text: "Added on this page", attrs: { "data-testid": "source" } });
  return el("span", { attrs: { "data-testid": "source" } }, [
    prefix, el("span", { text: ago(entry.created_at), attrs: { "data-ago": entry.created_at } }),
  ]);
}

/** Every "just now" / "3 minutes ago" on the page, said again for the present moment (no re-render, focus stays). */
export function refreshTimes(now = Date.now()) {
  for (const node of document.querySelectorAll("[data-ago]")) {
    const words = ago(node.getAttribute("data-ago"), now);
    if (node.textContent !== words) node.textContent = words;
  }
}

/** Where a refused change's error belongs: the text, the expiry, or nowhere in particular (null). */
export function fieldOf(err) {
  if (err.code === "credential_refused" || err.field === "text") return "text";
  if (err.code === "invalid_request" && /expires_in_days/.test(err.serverMessage || "")) return "expiry";
  if (err.code === "invalid_request" && /^text\b/.test(err.serverMessage || "")) return "text";
  return null;
}

/* A text longer than this (or with more lines) is shown collapsed until the person asks for all of it, so what
 * follows it (the buttons, the next item) is never screens away; runs of blank lines are counted, not drawn. */
const LONG_LINES = 8;
const LONG_CHARS = 600;
const BLANK_RUN = /\n[ \t]*(?:\n[ \t]*){2,}/g;

function collapsedNodes(text) {
  const nodes = [];
  let from = 0;
  for (const run of text.matchAll(BLANK_RUN)) {
    nodes.push(...textNodes(text.slice(from, run.index)), "\n");
    const blank = run[0].split("\n").length - 2;
    nodes.push(el("span", { className: "blank-run", text: `[${plural(blank, "blank line")}]` }), "\n");
    from = run.index + run[0].length;
  }
  nodes.push(...textNodes(text.slice(from)));
  return nodes;
}

/** Show all of a long text, or collapse it again (entries-view.js and proposals-view.js ask on its button). */
export function toggleText(id) {
  if (state.expanded.has(id)) state.expanded.delete(id);
  else state.expanded.add(id);
  changed();
}

export function itemText(entry) {
  const text = String(entry.text);
  const lines = text.split("\n").length;
  const id = nextId("item-text");
  const long = lines > LONG_LINES || text.length > LONG_CHARS;
  const open = !long || state.expanded.has(entry.id);
  const p = el("p", { className: `item-text${open ? "" : " item-text-collapsed"}`, attrs: { "data-testid": "text", id } },
    open ? textNodes(text) : collapsedNodes(text));
  if (!long) return [p];
  return [p, el("button", { className: "button button-small button-quiet", text: `Show the whole text (${plural(lines, "line")})`,
    attrs: { type: "button", "data-action": "expand", "aria-expanded": String(open), "aria-controls": id } })];
}

/** Where it came from and whether it is tainted come first: a long text never pushes them out of sight. */
export function itemBody(entry, isProposal, taintId) {
  const badges = el("p", { className: "badges" }, [
    el("span", { className: "badge", text: KIND_LABELS[entry.kind] || entry.kind, attrs: { "data-testid": "kind" } }),
    entry.pinned ? el("span", { className: "badge badge-pinned", text: "Pinned", attrs: { "data-testid": "pinned" } }) : null,
    entry.edited ? el("span", { className: "badge", text: "Edited by you", attrs: { "data-testid": "edited" } }) : null,
  ]);
  const expiry = entry.expires_at
    ? el("span", {}, [timeEl(entry.expires_at, "expiry"), ` (in ${plural(daysUntil(entry.expires_at), "day")})`])
    : el("span", { text: "Never — kept until you forget it", attrs: { "data-testid": "expiry" } });
  const meta = el("dl", { className: "meta" }, [
    ...metaRow("From", el("span", { text: originWords(entry, isProposal), attrs: { "data-testid": "origin" } })),
    ...metaRow("Source", el("span", {}, [
      sourceLine(entry),
      idsDisclosure(entry),
      conversationButton(entry),
    ])),
    ...metaRow(isProposal ? "Suggested" : "Added", timeEl(entry.created_at, "created")),
    ...(isProposal ? [] : metaRow("Expires", expiry)),
  ]);
  return [badges, entry.tainted ? taintedWarning(taintId) : null, meta, ...itemText(entry)].filter(Boolean);
}

export function byteCounter(node, text) {
  const n = byteLength(text);
  const max = limits().bytes_per_entry;
  node.textContent = n > max ? `${n} / ${max} bytes — too long` : `${n} / ${max} bytes`;
  node.classList.toggle("over", n > max);
}

export function parseDays(raw) {
  const text = String(raw).trim();
  if (text === "") return null;
  const days = Number(text);
  if (!Number.isInteger(days) || days < 1 || days > 3650) return NaN;
  return days;
}

export function checkText(text) {
  const max = limits().bytes_per_entry;
  if (!text.trim()) return "Write something to remember first.";
  const n = byteLength(text);
  if (n > max) return `This is ${n} bytes; an entry can hold at most ${max}. Shorten it and try again.`;
  return null;
}

export const DAYS_PROBLEM = "“Forget after” must be a whole number of days from 1 to 3650, or empty for never.";

function kindSelect(id, value) {
  const select = el("select", { attrs: { id, "data-testid": "edit-kind", "data-field": "kind" } },
    Object.entries(KIND_LABELS).map(([kind, label]) => el("option", { text: label, attrs: { value: kind } })));
  select.value = value;
  return select;
}

/**
 * The fields of an edit form (text, kind, expiry, pin) with an error slot under the text and the expiry.
 * Returns the nodes to append, and the inputs with their slots so errors can be placed at the field.
 */
export function editFields(draft, expiryHint) {
  const ids = { text: nextId("edit-text"), bytes: nextId("edit-bytes"), kind: nextId("edit-kind"),
    pinned: nextId("edit-pinned"), expiry: nextId("edit-expiry"), hint: nextId("edit-hint"), left: nextId("edit-left-out") };
  if (draft.leftOut === undefined) {
    // A textarea obeys bidi controls ("Do ‮ton‬ share" edited as "Do not share"): the draft starts without them.
    const clean = withoutMarked(draft.text);
    Object.assign(draft, { text: clean.text, leftOut: clean.count });
  }
  const leftOut = draft.leftOut ? el("p", { className: "hint", attrs: { id: ids.left, "data-testid": "edit-left-out" },
    text: `This text holds ${plural(draft.leftOut, "direction control or invisible character", "direction controls or invisible characters")} (shown as marks above). They are left out here: saving keeps the text without them.` }) : null;
  const textarea = el("textarea", { attrs: { id: ids.text, rows: "3", "data-testid": "edit-text",
    "aria-describedby": leftOut ? `${ids.left} ${ids.bytes}` : ids.bytes, "data-field": "text" } });
  textarea.value = draft.text;
  const bytes = el("span", { className: "bytes", attrs: { id: ids.bytes } });
  byteCounter(bytes, draft.text);
  const pinned = el("input", { attrs: { id: ids.pinned, type: "checkbox", "data-testid": "edit-pinned", "data-field": "pinned" } });
  pinned.checked = draft.pinned;
  const expiry = el("input", { attrs: { id: ids.expiry, type: "number", min: "1", max: "3650", step: "1",
    inputmode: "numeric", "data-testid": "edit-expiry", "data-field": "expiry", "aria-describedby": ids.hint } });
  expiry.value = draft.expiry;
  const textError = errorSlot(nextId("edit-text-error"));
  const expiryError = errorSlot(nextId("edit-expiry-error"));
  const nodes = [
    el("div", { className: "field" }, [
      el("label", { text: "Text", attrs: { for: ids.text } }), leftOut, textarea, textError,
      el("p", { className: "field-foot" }, [bytes]),
    ]),
    el("div", { className: "field-row" }, [
      el("div", { className: "field" }, [el("label", { text: "Kind", attrs: { for: ids.kind } }), kindSelect(ids.kind, draft.kind)]),
      el("div", { className: "field" }, [
        el("label", { text: "Forget after (days)", attrs: { for: ids.expiry } }), expiry, expiryError,
        el("span", { className: "hint", text: expiryHint, attrs: { id: ids.hint } }),
      ]),
      el("div", { className: "field field-check" }, [pinned, el("label", { text: "Pinned", attrs: { for: ids.pinned } })]),
    ]),
  ];
  return { nodes, text: [textarea, textError], expiry: [expiry, expiryError] };
}

export function expiryHint(entry) {
  return entry.expires_at
    ? `Now: expires ${formatDate(entry.expires_at)}. Empty: never expire.`
    : "Empty: keep until you forget it.";
}

/** Keeps a draft in step with its form's fields (text, kind, pinned, expiry). */
export function trackDraft(event, draft) {
  const field = event.target.getAttribute("data-field");
  if (field === "text") {
    draft.text = event.target.value;
    const bytes = event.target.closest("form").querySelector(".bytes");
    if (bytes) byteCounter(bytes, draft.text);
  } else if (field === "kind") draft.kind = event.target.value;
  else if (field === "pinned") draft.pinned = event.target.checked;
  else if (field === "expiry") draft.expiry = event.target.value;
}
