/* One agent's row on the Agents tab, in words: when it last read, what came from it, what waits, its two switches. */

import { connectionsList } from "./connections.js";
import { el, nextId, plural } from "./dom.js";
import { agentLabel, agentQuoted, ago } from "./words.js";

export const quoted = agentQuoted;

function readWords(row) {
  const when = row.last_read_at ? ` It last read it ${ago(row.last_read_at)}.` : "";
  if (!row.read) return `It may not read your memory: its conversations get nothing from it.${when}`;
  return row.last_read_at ? `It last read your memory ${ago(row.last_read_at)}.` : "It has not read your memory yet.";
}

function entriesWords(row) {
  if (!row.entries) return "None of your entries came from it.";
  return `${row.entries} of your entries came from it.`;
}

function waitingWords(row) {
  const proposed = row.propose ? "" : " It may not suggest anything new.";
  if (!row.waiting) return `No suggestion from it is waiting.${proposed}`;
  return `${plural(row.waiting, "suggestion")} from it ${row.waiting === 1 ? "is" : "are"} waiting for your review.${proposed}`;
}

function agentSwitch(row, name, label, help) {
  const id = nextId(`agent-${name}`);
  const helpId = `${id}-help`;
  const input = el("input", { className: "switch-input", attrs: { id, type: "checkbox", role: "switch",
    "data-switch": name, "data-agent": row.agent, "aria-describedby": helpId } });
  input.checked = Boolean(row[name]);
  return el("div", { className: "agent-switch" }, [
    el("div", { className: "switch-row" }, [
      el("span", { className: "switch" }, [input,
        el("span", { className: "switch-track", attrs: { "aria-hidden": "true" } }, [el("span", { className: "switch-thumb" })])]),
      el("label", { className: "switch-label", text: label, attrs: { for: id } }),
    ]),
    el("p", { className: "hint", text: help, attrs: { id: helpId } }),
  ]);
}

export function agentItem(row) {
  const forgettable = row.entries + row.waiting;
  const headingId = nextId("agent-name");
  return el("li", { className: "item agent", attrs: { "data-testid": "agent", "data-agent": row.agent, "aria-labelledby": headingId } }, [
    el("h3", { className: "agent-name", text: agentLabel(row.agent), attrs: { id: headingId, tabindex: "-1" } }),
    el("p", { text: readWords(row), attrs: { "data-testid": "agent-read" } }),
    el("p", { text: entriesWords(row), attrs: { "data-testid": "agent-entries" } }),
    el("p", { text: waitingWords(row), attrs: { "data-testid": "agent-waiting" } }),
    row.last_proposal_at ? el("p", { className: "hint", text: `Its last suggestion arrived ${ago(row.last_proposal_at)}.`,
      attrs: { "data-testid": "agent-proposed" } }) : null,
    connectionsList(row.agent),
    agentSwitch(row, "read", "May read my memory", "Off: its conversations are given nothing from your memory."),
    agentSwitch(row, "propose", "May suggest", "Off: anything it suggests is refused before it reaches you."),
    forgettable
      ? el("div", { className: "button-row" }, [el("button", { className: "button button-small button-danger",
        text: "Forget everything it suggested…",
        attrs: { type: "button", "data-action": "forget-agent", "data-agent": row.agent,
          "aria-label": `Forget everything it suggested… (${agentLabel(row.agent)})` } })])
      : null,
  ]);
}
