/*
 * Deciding on many suggestions at once: "Accept all" and "Reject all from <agent>". Each is still one
 * request per suggestion, so every accept passes every rule (the cap, memory off, duplicates) on its
 * own; the page then lists the ones that failed and why. Imports helpers and the store only; app.js
 * hands in reloading memory and reporting an error.
 *
 * Hooks: #proposals-bulk, #accept-all, button[data-action=reject-agent][data-agent], #bulk-report
 * (li[data-testid=bulk-failure][data-proposal-id]).
 */

import { api } from "./api.js";
import { $, el, focusNode, plural, shortText } from "./dom.js";
import { say } from "./status.js";
import { run, state } from "./store.js";
import { describeError } from "./words.js";

let deps = { reload: async () => {}, report: async () => {} };
let failures = []; // [{proposal, reason}] of the last bulk decision, shown until the next one
let owner = null; // whose decisions those were: another account starts with no report

function agentsWaiting(proposals) {
  const counts = new Map();
  for (const p of proposals) {
    if (p.agent) counts.set(p.agent, (counts.get(p.agent) || 0) + 1);
  }
  return [...counts.entries()];
}

export function renderBulk() {
  const mem = state.memory;
  const proposals = mem ? mem.proposals : [];
  if (owner !== state.user) {
    failures = [];
    owner = state.user;
  }
  const box = $("proposals-bulk");
  box.hidden = proposals.length === 0 && failures.length === 0;
  const accept = el("button", { className: "button button-small button-primary", text: `Accept all (${proposals.length})`,
    attrs: { id: "accept-all", type: "button", disabled: !mem || !mem.enabled || proposals.length === 0,
      "aria-describedby": mem && !mem.enabled ? "proposals-off-note" : null } });
  const rejects = agentsWaiting(proposals).map(([agent, n]) => el("button", {
    className: "button button-small", text: `Reject all from ${agent} (${n})`,
    attrs: { type: "button", "data-action": "reject-agent", "data-agent": agent } }));
  const row = el("div", { className: "button-row" }, proposals.length ? [accept, ...rejects] : []);
  const report = failures.length
    ? el("div", { className: "bulk-report" }, [
      el("p", { text: `${plural(failures.length, "suggestion")} could not be decided:` }),
      el("ul", { attrs: { id: "bulk-report" } }, failures.map(({ proposal, reason }) => el("li", {
        attrs: { "data-testid": "bulk-failure", "data-proposal-id": proposal.id } },
        [el("strong", { text: `“${shortText(proposal.text)}”` }), ` — ${reason}`]))),
    ])
    : null;
  box.replaceChildren(...[row, report].filter(Boolean));
}

async function decideAll(proposals, verdict) {
  const done = [];
  failures = [];
  for (const proposal of proposals) {
    try {
      await api("POST", `v1/memory/${encodeURIComponent(proposal.id)}/${verdict}`);
      done.push(proposal);
    } catch (err) {
      if (err.status === 401 || err.status === 403 || err.code === "network") {
        await deps.report(err, verdict);
        break; // nothing after this would succeed either
      }
      failures.push({ proposal, reason: describeError(err, verdict) });
    }
  }
  state.etag = null;
  for (const p of done) state.correcting.delete(p.id);
  await deps.reload();
  return done.length;
}

async function acceptAll() {
  const proposals = [...state.memory.proposals];
  const accepted = await decideAll(proposals, "accept");
  const failed = failures.length;
  say(failed
    ? `Accepted ${accepted} of ${plural(proposals.length, "suggestion")}. ${failed} could not be accepted: the reasons are listed under “Waiting for your review”.`
    : `Accepted all ${plural(accepted, "suggestion")}: they are now in your memory.`, failed ? "error" : "ok", failed ? "bulk_partial" : "");
  renderBulk();
  focusNode(failed ? $("bulk-report") : $("proposals-heading"));
}

async function rejectFrom(agent) {
  const proposals = state.memory.proposals.filter((p) => p.agent === agent);
  const rejected = await decideAll(proposals, "reject");
  say(failures.length
    ? `Rejected ${rejected} of ${plural(proposals.length, "suggestion")} from “${agent}”; the others are listed below.`
    : `Rejected ${plural(rejected, "suggestion")} from “${agent}”: they were deleted.`, failures.length ? "error" : "ok");
  renderBulk();
  focusNode(failures.length ? $("bulk-report") : $("proposals-heading"));
}

export function wireBulk(given) {
  deps = { ...deps, ...given };
  $("proposals-bulk").addEventListener("click", (event) => {
    const button = event.target.closest("button");
    if (!button || button.disabled || !state.memory) return;
    if (button.id === "accept-all") run(acceptAll);
    else if (button.getAttribute("data-action") === "reject-agent") run(() => rejectFrom(button.getAttribute("data-agent")));
  });
}

