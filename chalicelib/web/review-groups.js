/*
 * Waiting suggestions grouped by the conversation (session) they came from: one group per session, its header
 * saying the agent, when, whether it read untrusted content and how many, with the group's decisions — "Accept
 * these N" (review-bulk.js) and "Forget everything from this conversation" (agents-view.js) — above its rows.
 *
 * Hooks: li[data-testid=conversation][data-group] (its h3[data-testid=group-heading], p[data-testid=group-tainted]),
 * button[data-action=accept-group][data-group], button[data-action=forget-conversation][data-agent][data-session].
 */

import { el, nextId, plural, shortText } from "./dom.js";
import { state } from "./store.js";
import { agentName, ago } from "./words.js";

/** The conversation a suggestion came from: its session, or (none recorded) its agent alone. */
export function groupKey(proposal) {
  const session = proposal.source && proposal.source.session_id;
  return session ? `session:${session}` : `agent:${proposal.agent || ""}`;
}

/** What the suggestions list shows: every waiting one, or only the tainted ones ("Tainted suggestions only"). */
export function shownProposals() {
  const all = state.memory ? state.memory.proposals : [];
  return state.proposalFilter.tainted ? all.filter((p) => p.tainted) : all;
}

/** The suggestions shown in one group, as its "Accept these N" counted them. */
export const shownInGroup = (key) => shownProposals().filter((p) => groupKey(p) === key);

/** [{key, session, newest, proposals}] in the order each group's first suggestion is listed (newest first). */
export function groupsOf(proposals) {
  const groups = new Map();
  for (const p of proposals) {
    const key = groupKey(p);
    if (!groups.has(key)) groups.set(key, { key, session: (p.source && p.source.session_id) || null, newest: p.created_at, proposals: [] });
    const group = groups.get(key);
    group.proposals.push(p);
    if (String(p.created_at) > String(group.newest)) group.newest = p.created_at;
  }
  return [...groups.values()];
}

function taintNote(group, id) {
  const n = group.proposals.length;
  const tainted = group.proposals.filter((p) => p.tainted).length;
  if (!tainted) return null;
  const which = tainted === n ? (n === 1 ? "It" : `All ${n}`) : `${tainted} of these ${n}`;
  return el("p", { className: "tainted group-tainted", attrs: { id, "data-testid": "group-tainted" } }, [
    el("span", { className: "tainted-icon", text: "⚠", attrs: { "aria-hidden": "true" } }),
    el("span", {}, [el("strong", { text: "Tainted: " }),
      `${which} came from this conversation after it read untrusted content (such as a web page or an email).`]),
  ]);
}

/** The group's decisions: "Accept these N" (when more than one waits) and "Forget everything from this conversation". */
function decisions(group, off, describedBy) {
  const n = group.proposals.length;
  const first = shortText(group.proposals[0].text, 40);
  const accept = n > 1 ? el("button", { className: "button button-small button-primary", text: `Accept these ${n}`, attrs: {
    type: "button", "data-action": "accept-group", "data-group": group.key, disabled: off, "aria-describedby": describedBy,
    "aria-label": `Accept these ${n}: “${first}” and ${plural(n - 1, "more")} from this conversation`,
  } }) : null;
  const agent = group.proposals[0].agent;
  const forget = group.session && agent ? el("button", { className: "button button-small button-danger",
    text: "Forget everything from this conversation", attrs: {
      type: "button", "data-action": "forget-conversation", "data-agent": agent, "data-session": group.session,
      "aria-label": `Forget everything from this conversation “${first}”${n > 1 ? ` and ${plural(n - 1, "more")}` : ""}`,
    } }) : null;
  return el("div", { className: "button-row group-decisions" }, [accept, forget]);
}

/** One conversation's group: its header, then its rows (already built, proposal-row.js). */
export function groupItem(group, rows) {
  const off = !(state.memory && state.memory.enabled);
  const headingId = nextId("group");
  const taintId = nextId("group-taint");
  const taint = taintNote(group, taintId);
  const n = group.proposals.length;
  const heading = el("h3", { className: "group-heading", attrs: { id: headingId, "data-testid": "group-heading" } }, [
    el("bdi", { text: agentName(group.proposals[0]) }),
    group.session ? ", in one conversation, " : ", conversation not recorded, ",
    el("span", { text: ago(group.newest), attrs: { "data-ago": group.newest } }),
    ` · ${plural(n, "suggestion")}`,
  ]);
  const describedBy = [off ? "proposals-off-note" : null, taint ? taintId : null].filter(Boolean).join(" ") || null;
  return el("li", { className: `group${taint ? " group-is-tainted" : ""}`, attrs: {
    "data-testid": "conversation", "data-group": group.key, "data-tainted": String(Boolean(taint)) } }, [
    el("div", { className: "group-head" }, [heading, taint, decisions(group, off, describedBy)]),
    el("ul", { className: "group-rows", attrs: { "aria-labelledby": headingId } }, rows),
  ]);
}
