/* The search and filter form: it sets state.filter; the rule itself (`matches`) lives in store.js. */

import { $ } from "./dom.js";
import { emit, on, state } from "./store.js";

function read() {
  state.filter = {
    text: $("filter-text").value,
    kind: $("filter-kind").value,
    origin: $("filter-origin").value,
    tainted: $("filter-tainted").checked,
  };
  // Only the entries list shows the filter's effect: a keystroke redraws it alone, not every view
  // (suggestions redrawn on each key cost 300–400 ms a keystroke at 200 entries and 50 long suggestions).
  emit("filtered");
}

export function clearFilter() {
  $("filter-form").reset();
  read();
  $("filter-text").focus();
}

export function wireFilter() {
  const form = $("filter-form");
  on("signed-out", () => form.reset()); // state.filter is emptied by the sign-out itself
  form.addEventListener("input", read);
  form.addEventListener("change", read);
  form.addEventListener("submit", (event) => event.preventDefault());
  $("filter-clear").addEventListener("click", clearFilter);
}
