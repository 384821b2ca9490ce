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

/** A short, single-line version of an entry's text for accessible names ("Edit “Likes tea”"). */
export function shortText(text, max = 60) {
  const line = String(text).replace(/\s+/g, " ").trim();
  return line.length > max ? line.slice(0, max - 1) + "…" : line;
}

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
  const item = active && active.closest ? active.closest("li[data-entry-id], li[data-proposal-id]") : null;
  const where = item && {
    attr: item.hasAttribute("data-entry-id") ? "data-entry-id" : "data-proposal-id",
    id: item.getAttribute(item.hasAttribute("data-entry-id") ? "data-entry-id" : "data-proposal-id"),
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
