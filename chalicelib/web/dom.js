/* DOM helpers for the Memory page: every node is built with createElement/textContent, never from HTML. */

export const $ = (id) => document.getElementById(id);

export function el(tag, options, children) {
  const node = document.createElement(tag);
  const opts = options || {};
  if (opts.className) node.className = opts.className;
  if (opts.text !== undefined && opts.text !== null) node.textContent = String(opts.text);
  for (const [name, value] of Object.entries(opts.attrs || {})) {
    if (value !== undefined && value !== null && value !== false) node.setAttribute(name, String(value));
  }
  for (const child of children || []) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

let uid = 0;
export const nextId = (prefix) => `${prefix}-${++uid}`;

export function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many || one + "s"}`;
}

const encoder = new TextEncoder();
export const byteLength = (text) => encoder.encode(text).length;

export function focusNode(node) {
  if (!node) return;
  if (!node.hasAttribute("tabindex") && !/^(BUTTON|INPUT|SELECT|TEXTAREA|A)$/.test(node.tagName)) {
    node.setAttribute("tabindex", "-1");
  }
  node.focus();
}

/*
 * Bidi controls (U+061C, U+200E/F, U+202A–E, U+2066–9) stored in a text would reorder what is drawn around them:
 * the page's own words, or the text itself ("Do ‮ton‬ share" drawn as "Do not share" while agents are given
 * "ton"). So the page never obeys one: each is drawn as a visible mark, and what is drawn is what agents get.
 * The line and paragraph separators (U+2028/9) end every isolate around them (UAX #9, X8), and characters
 * nobody sees are marked too: tag characters (U+E0000–E0FFF, ASCII smuggled to a model, and the supplementary
 * variation selectors), zero-width space and word joiners (U+200B, U+2060–4), U+FEFF, the Hangul fillers.
 * Not the ZWJ/ZWNJ or U+FE00–FE0F, which emoji and scripts need to be drawn right.
 */
const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\u2028\u2029]/;
const UNSEEN = /[\u200B\u2060-\u2064\uFEFF\u115F\u1160\u3164\uFFA0\u{E0000}-\u{E0FFF}]/u;
const MARKED = new RegExp(`${BIDI.source}|${UNSEEN.source}`, "gu");
const markOf = (control) => `[U+${control.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}]`;

/** A text with every bidi control written out as its mark ("[U+202E]"): for strings, names and labels. */
export const withMarks = (text) => String(text).replace(MARKED, markOf);

/** How many marked characters a text holds, and the text without them (for an edit form: a textarea obeys them). */
export function withoutMarked(text) {
  const value = String(text);
  return { text: value.replace(MARKED, ""), count: [...value.matchAll(MARKED)].length };
}

/** A stored text as nodes to append: its words, and each bidi control as a visible mark. */
export function textNodes(text) {
  const value = String(text);
  const nodes = [];
  let from = 0;
  for (const found of value.matchAll(MARKED)) {
    if (found.index > from) nodes.push(value.slice(from, found.index));
    nodes.push(el("span", { className: "bidi-mark", text: markOf(found[0]), attrs: { title: BIDI.test(found[0])
      ? "A direction control stored in this text: shown here, not obeyed"
      : "An invisible character stored in this text: shown here so you see all that agents are given" } }));
    from = found.index + found[0].length;
  }
  if (from < value.length) nodes.push(value.slice(from));
  return nodes;
}

/** A short, single-line version of an entry's text for accessible names ("Edit “Likes tea”"). */
export function shortText(text, max = 60) {
  const line = withMarks(text).replace(/\s+/g, " ").trim();
  return line.length > max ? line.slice(0, max - 1) + "…" : line;
}

/**
 * A stored text quoted inside the page's own words: marked FSI … PDI in the message, so that `setText` draws
 * it in a <bdi> and its direction cannot turn the words around it (the marks themselves are never drawn).
 */
export const quoted = (text, max) => `“\u2068${shortText(text, max)}\u2069”`;

/** Set a node's text from a message: each text `quoted` marked becomes a <bdi>, the rest plain text. */
export function setText(node, message) {
  // Stored texts carry no FSI/PDI of their own (shortText shows them as marks), so every pair here is quoted's.
  const parts = String(message).split(/[\u2068\u2069]/);
  node.replaceChildren(...parts.map((part, at) => (at % 2 ? el("bdi", { text: part }) : part)).filter((part) => part !== ""));
}

/** A message as it reads, without quoted's isolation marks. */
export const plainText = (message) => String(message).replace(/[\u2068\u2069]/g, "");

export function formatDate(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" }).format(date);
}

export function daysUntil(iso) {
  const ms = new Date(iso).getTime() - Date.now();
  return Number.isNaN(ms) ? null : Math.max(1, Math.ceil(ms / 86400000));
}

export function timeEl(iso, testid) {
  return el("time", { text: formatDate(iso), attrs: { datetime: iso, "data-testid": testid } });
}

/** Re-render without losing the user's place: focus (and caret) go back to the same control if it still exists. */
export function keepingFocus(render) {
  const active = document.activeElement;
  const item = active && active.closest ? active.closest("li[data-entry-id], li[data-proposal-id], li[data-group]") : null;
  const attr = item && ["data-entry-id", "data-proposal-id", "data-group"].find((name) => item.hasAttribute(name));
  const where = item && {
    attr,
    id: item.getAttribute(attr),
    field: active.getAttribute("data-field"),
    action: active.getAttribute("data-action"),
    caret: typeof active.selectionStart === "number" ? [active.selectionStart, active.selectionEnd] : null,
  };
  render();
  if (!where) return;
  const again = document.querySelector(`li[${where.attr}="${CSS.escape(where.id)}"]`);
  if (again && active === item) return focusNode(again); // the item itself had focus (after an undo)
  const target = again && (where.field
    ? again.querySelector(`[data-field="${where.field}"]`)
    : again.querySelector(`[data-action="${where.action}"]`));
  if (target && target !== document.activeElement) {
    target.focus();
    if (where.caret && typeof target.setSelectionRange === "function") target.setSelectionRange(...where.caret);
  }
}
