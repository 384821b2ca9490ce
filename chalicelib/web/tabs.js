/* The Memory / Journal / Agents tabs (WAI-ARIA tabs pattern); changing tab clears old status messages and says "tab". */

import { $ } from "./dom.js";
import { clearStatus } from "./status.js";
import { emit, on } from "./store.js";

const ORDER = ["memory", "journal", "agents"];

export function selectTab(name, focus) {
  for (const tab of ORDER) {
    const selected = tab === name;
    const button = $(`tab-${tab}`);
    const wasSelected = button.getAttribute("aria-selected") === "true";
    if (selected && !wasSelected) clearStatus();
    button.setAttribute("aria-selected", String(selected));
    button.tabIndex = selected ? 0 : -1;
    $(`panel-${tab}`).hidden = !selected;
  }
  if (focus) $(`tab-${name}`).focus();
  emit("tab", name); // the journal and agents views load when they are shown
}

function onKeydown(event) {
  const current = ORDER.indexOf(event.currentTarget.id.replace("tab-", ""));
  let next = null;
  if (event.key === "ArrowRight") next = (current + 1) % ORDER.length;
  else if (event.key === "ArrowLeft") next = (current - 1 + ORDER.length) % ORDER.length;
  else if (event.key === "Home") next = 0;
  else if (event.key === "End") next = ORDER.length - 1;
  if (next === null) return;
  event.preventDefault();
  selectTab(ORDER[next], true);
}

export function wireTabs() {
  on("signed-in", () => selectTab("memory", false));
  for (const tab of ORDER) {
    $(`tab-${tab}`).addEventListener("click", () => selectTab(tab, false));
    $(`tab-${tab}`).addEventListener("keydown", onKeydown);
  }
}
