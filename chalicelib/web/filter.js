/* Search and filter the entries by text, kind, origin and taint (on the page: nothing is sent). */

import { $ } from "./dom.js";
import { changed, state } from "./store.js";

export function filterActive() {
  const f = state.filter;
  return Boolean(f.text.trim() || f.kind || f.origin || f.tainted);
}

export function matches(entry) {
  const f = state.filter;
  const words = f.text.trim().toLocaleLowerCase().split(/\s+/).filter(Boolean);
  const haystack = `${entry.text} ${entry.agent || ""}`.toLocaleLowerCase();
  return words.every((word) => haystack.includes(word))
    && (!f.kind || entry.kind === f.kind)
    && (!f.origin || entry.origin === f.origin)
    && (!f.tainted || Boolean(entry.tainted));
}

function read() {
  state.filter = {
    text: $("filter-text").value,
    kind: $("filter-kind").value,
    origin: $("filter-origin").value,
    tainted: $("filter-tainted").checked,
  };
  changed();
}

export function clearFilter() {
  $("filter-form").reset();
  read();
  $("filter-text").focus();
}

export function wireFilter() {
  const form = $("filter-form");
  form.addEventListener("input", read);
  form.addEventListener("change", read);
  form.addEventListener("submit", (event) => event.preventDefault());
  $("filter-clear").addEventListener("click", clearFilter);
}
