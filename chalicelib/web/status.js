/* Telling the person what happened: the status line (cleared on their next action) and errors at their field. */

import { $, plainText, setText } from "./dom.js";

let statusTimer = 0;

export function say(text, kind, code) {
  const status = $("status");
  window.clearTimeout(statusTimer);
  status.dataset.kind = kind || "info";
  status.dataset.code = code || "";
  // The same sentence twice would not be announced again: blank it first, then set it.
  if (status.textContent === plainText(text)) {
    status.textContent = "";
    statusTimer = window.setTimeout(() => setText(status, text), 60);
  } else {
    setText(status, text);
  }
}

export function clearStatus() {
  window.clearTimeout(statusTimer);
  const status = $("status");
  status.textContent = "";
  status.dataset.kind = "info";
  status.dataset.code = "";
}

function describedBy(input) {
  return (input.getAttribute("aria-describedby") || "").split(/\s+/).filter(Boolean);
}

/** Show `message` under `input`: aria-invalid, described by the message, scrolled into view, focused. */
export function fieldError(input, slot, message, code) {
  clearStatus(); // an older "Added to memory." beside a new error would say the opposite of what happened
  setText(slot, message);
  slot.dataset.code = code || "";
  slot.hidden = false;
  input.setAttribute("aria-invalid", "true");
  const ids = describedBy(input);
  if (!ids.includes(slot.id)) input.setAttribute("aria-describedby", [slot.id, ...ids].join(" "));
  input.scrollIntoView({ block: "center" });
  input.focus();
}

export function clearFieldError(input, slot) {
  if (!slot || slot.hidden) return;
  slot.hidden = true;
  slot.textContent = "";
  slot.dataset.code = "";
  input.removeAttribute("aria-invalid");
  input.setAttribute("aria-describedby", describedBy(input).filter((id) => id !== slot.id).join(" "));
}

/** An error slot for a form built in script (edit, edit-and-accept). */
export function errorSlot(id) {
  const slot = document.createElement("p");
  slot.id = id;
  slot.className = "field-error";
  slot.setAttribute("data-testid", "field-error");
  slot.hidden = true;
  return slot;
}
