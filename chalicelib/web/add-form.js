/* The "Add to memory" form: checks before sending, errors at the field that caused them, disabled while off. */

import { api } from "./api.js";
import { $ } from "./dom.js";
import { DAYS_PROBLEM, byteCounter, checkText, fieldOf, parseDays } from "./item.js";
import { loadMemory, reportError } from "./memory.js";
import { clearFieldError, fieldError, say } from "./status.js";
import { ask, on, run, state } from "./store.js";
import { describeError } from "./words.js";

const FIELDS = {
  text: () => [$("add-text"), $("add-text-error")],
  expiry: () => [$("add-expiry"), $("add-expiry-error")],
  form: () => [$("add-submit"), $("add-error")],
};

function clearAll() {
  for (const field of Object.values(FIELDS)) clearFieldError(...field());
}

async function addEntry(event) {
  event.preventDefault();
  clearAll();
  const text = $("add-text").value;
  const problem = checkText(text);
  if (problem) return fieldError(...FIELDS.text(), problem, "invalid_request");
  const days = parseDays($("add-expiry").value);
  if (Number.isNaN(days)) return fieldError(...FIELDS.expiry(), DAYS_PROBLEM, "invalid_request");
  const body = { text, kind: $("add-kind").value, pinned: $("add-pinned").checked };
  if (days !== null) body.expires_in_days = days;
  await run(async () => {
    try {
      await ask("settleForget"); // a forget in its undo window still counts against the cap: it goes first
      await api("POST", "v1/memory", body);
      $("add-form").reset();
      say("Added to memory.", "ok");
      await loadMemory(true);
    } catch (err) {
      const field = fieldOf(err);
      if (field) fieldError(...FIELDS[field](), describeError(err, "add"), err.code);
      else if (err.code === "limit_reached" || err.code === "memory_off") {
        fieldError(...FIELDS.form(), describeError(err, "add"), err.code);
        if (err.code === "memory_off") await loadMemory(true);
      } else await reportError(err, "add");
    }
  });
}

export function renderAddForm() {
  const on = Boolean(state.memory && state.memory.enabled);
  $("add-fieldset").disabled = !on;
  $("add-off-note").hidden = on;
  byteCounter($("add-bytes"), $("add-text").value);
}

export function wireAddForm() {
  const form = $("add-form");
  form.addEventListener("submit", addEntry);
  form.addEventListener("input", (event) => {
    if (event.target.id === "add-text") {
      byteCounter($("add-bytes"), event.target.value);
      clearFieldError(...FIELDS.text());
      clearFieldError(...FIELDS.form());
    } else if (event.target.id === "add-expiry") clearFieldError(...FIELDS.expiry());
  });
  on("signed-out", () => { form.reset(); clearAll(); }); // a half-typed note is the previous person's too
  form.addEventListener("reset", () => {
    window.setTimeout(() => byteCounter($("add-bytes"), $("add-text").value), 0);
  });
}
