/*
 * Deciding on many suggestions at once: "Accept all", a conversation's "Accept these N" (review-groups.js)
 * and "Reject all from <agent>". Each is still one request per suggestion, so every accept passes every
 * rule (the cap, memory off, duplicates) on its own; the page then lists the ones that failed and why. Repeats (an agent suggesting notes already
 * kept: a waiting place each, no text) show as one line per agent whose "Dismiss" rejects them; "Reject
 * all from <agent>" rejects them too. Imports helpers and the store only; app.js hands in reloading
 * memory and reporting an error.
 *
 * Hooks: #proposals-bulk, #accept-all, #accept-all-taint, button[data-action=reject-agent][data-agent], #bulk-report
 * (li[data-testid=bulk-failure][data-proposal-id]), p[data-testid=repeats][data-agent] and its
 * button[data-action=dismiss-repeats]; in #proposals, button[data-action=accept-group][data-group].
 */

import { api } from "./api.js";
import { $, el, focusNode, plural, quoted, setText } from "./dom.js";
import { say } from "./status.js";
import { acceptGuessed, guessesOnScreen, replacedWords } from "./likely-update.js";
import { shownInGroup } from "./review-groups.js";
import { ask, changed, limits, run, signedInAsNow, state } from "./store.js";
import { agentLabel, agentQuoted, describeError, goneWords } from "./words.js";

let deps = { reload: async () => {}, report: async () => {} };
let failures = []; // [{proposal, reason}] of the last bulk decision, shown until the next one
let owner = null; // whose decisions those were: another account starts with no report

function agentsWaiting(proposals) { // also counts repeats: [{agent}]
  const counts = new Map();
  for (const p of proposals) {
    if (p.agent) counts.set(p.agent, (counts.get(p.agent) || 0) + 1);
  }
  return [...counts.entries()];
}

function withText(node, message) {
  setText(node, message);
  return node;
}

export function renderBulk() {
  const mem = state.memory;
  const proposals = mem ? mem.proposals : [];
  if (owner !== state.user) {
    failures = [];
    owner = state.user;
  }
  const box = $("proposals-bulk");
  const repeats = agentsWaiting(mem && mem.repeats ? mem.repeats : []).map(([agent, n]) => el("p", {
    className: "notice", attrs: { "data-testid": "repeats", "data-agent": agent } }, [el("bdi", { text: agentLabel(agent) }),
    ` repeated ${plural(n, "note")} you already keep. `, el("button", { className: "button button-small", text: "Dismiss",
      attrs: { type: "button", "data-action": "dismiss-repeats", "data-agent": agent } })]));
  box.hidden = proposals.length === 0 && failures.length === 0 && repeats.length === 0;
  const tainted = proposals.filter((p) => p.tainted).length;
  // Accept all takes the tainted ones in too: it says so, to the eye and in its description, as each Accept does.
  const taintNote = tainted ? el("p", { className: "notice", attrs: { id: "accept-all-taint" } }, [el("strong", { text: "Tainted: " }),
    `${tainted === proposals.length ? (tainted === 1 ? "It" : `All ${tainted}`) : `${tainted} of these ${proposals.length}`} came from a session that read untrusted content. “Accept all” takes ${tainted === 1 ? "it" : "them"} in too.`]) : null;
  const describedBy = [mem && !mem.enabled ? "proposals-off-note" : null, taintNote ? "accept-all-taint" : null].filter(Boolean).join(" ");
  const accept = el("button", { className: "button button-small button-primary", text: `Accept all (${proposals.length})`,
    attrs: { id: "accept-all", type: "button", disabled: !mem || !mem.enabled || proposals.length === 0,
      "aria-describedby": describedBy || null } });
  const rejects = agentsWaiting(proposals).map(([agent, n]) => el("button", {
    className: "button button-small", text: `Reject all from ${agentLabel(agent)} (${n})`,
    attrs: { type: "button", "data-action": "reject-agent", "data-agent": agent } }));
  const row = el("div", { className: "button-row" }, proposals.length ? [accept, ...rejects] : []);
  const report = failures.length
    ? el("div", { className: "bulk-report" }, [
      el("p", { text: `${plural(failures.length, "suggestion")} could not be decided:` }),
      el("ul", { attrs: { id: "bulk-report" } }, failures.map(({ proposal, reason }) => el("li", {
        attrs: { "data-testid": "bulk-failure", "data-proposal-id": proposal.id } },
        [withText(el("strong"), quoted(proposal.text)), withText(el("span"), ` — ${reason}`)]))),
    ])
    : null;
  box.replaceChildren(...repeats, ...[proposals.length ? taintNote : null, row, report].filter(Boolean));
}

/** Why the rest were not sent: after a lost connection or a full memory, nothing after would succeed either. */
function stopsTheRest(err, verdict) {
  if (err.code === "network") return "Not sent: the connection was lost.";
  if (verdict === "accept" && err.code === "limit_reached") return "Not tried: memory is full.";
  return null;
}

/**
 * Each decision in turn: {done, gone, stopped} where `gone` counts the ones already decided elsewhere (another
 * tab or device: no longer waiting, so not a failure, and not this run's either) and `stopped` is the error that
 * ended the run early (a lost connection, a full memory), or null when every one was tried; null when the person
 * signed out midway (the rest are not sent under anyone else's token).
 */
async function decideAll(proposals, verdict, guesses = new Map()) {
  const done = [];
  const gone = [];
  const how = { plain: 0, replaced: 0, unreplaced: 0 }; // accepts that replaced the entry their row named, or found it gone
  let stopped = null;
  const still = signedInAsNow();
  failures = [];
  for (const [at, proposal] of proposals.entries()) {
    try {
      if (verdict === "accept") how[await acceptGuessed(proposal.id, guesses.get(proposal.id))] += 1;
      else await api("POST", `v1/memory/${encodeURIComponent(proposal.id)}/${verdict}`);
      if (!still()) break;
      done.push(proposal);
    } catch (err) {
      if (!still()) break;
      if (err.status === 401 || err.status === 403) {
        await deps.report(err, verdict); // signs out: nothing after this would be this person's
        break;
      }
      if (err.code === "not_found") {
        gone.push(proposal);
        continue;
      }
      failures.push({ proposal, reason: describeError(err, verdict) });
      const rest = stopsTheRest(err, verdict);
      if (rest) {
        stopped = err;
        for (const left of proposals.slice(at + 1)) failures.push({ proposal: left, reason: rest });
        break;
      }
    }
  }
  if (!still()) {
    failures = [];
    return null;
  }
  state.etag = null;
  for (const p of done) state.correcting.delete(p.id);
  // No longer waiting, whether the refresh below lands or not (a lost connection): a retry must not send them again.
  const decided = new Set([...done, ...gone].map((p) => p.id));
  if (state.memory) state.memory = { ...state.memory, proposals: state.memory.proposals.filter((p) => !decided.has(p.id)) };
  changed();
  await deps.reload();
  return { done: done.length, gone: gone.length, stopped, ...how };
}

/** What happened, in words: all of them, or how many of how many and why the others still wait. */
function outcome(verb, total, result, from) {
  const failed = failures.length;
  const waiting = failed === 1 ? "1 is still waiting" : `${failed} are still waiting`;
  const of = `${verb} ${result.done} of ${plural(total, "suggestion")}${from}`;
  if (result.stopped && result.stopped.code === "network") {
    return `${of}: the connection was lost, so ${waiting}. Try again once you are back online.`;
  }
  if (result.stopped) {
    const lim = limits().entries;
    return `${of}, then memory was full (${lim} of ${lim} entries): ${waiting}. Forget entries to make room.`;
  }
  return `${of}. ${failed} could not be ${verb.toLowerCase()}: the reasons are listed under “Waiting for your review”.`;
}

/** A suggestion being corrected is not accepted as the agent wrote it: the person finishes or cancels first. */
function stillCorrecting(proposals, label) {
  const editing = proposals.find((p) => state.correcting.has(p.id));
  if (!editing) return false;
  say(`Nothing was accepted: ${quoted(editing.text)} is being edited. Accept it with your changes or cancel editing, then choose “${label}” again.`, "error", "editing");
  const li = document.querySelector(`#proposals li[data-proposal-id="${CSS.escape(editing.id)}"]`);
  focusNode(li && li.querySelector("[data-field=text]"));
  return true;
}

/** "Accept all", or a conversation's "Accept these N" (`group`: review-groups.js; the ones it counted on screen). */
async function acceptAll(group) {
  const counted = group ? new Set(shownInGroup(group).map((p) => p.id)) : null;
  const guesses = guessesOnScreen($("proposals")); // the entries the rows name now, and no other, are replaced
  if (stillCorrecting(state.memory.proposals.filter((p) => !counted || counted.has(p.id)), group ? `Accept these ${counted.size}` : "Accept all")) return;
  await ask("settleForget"); // a forget in its undo window still counts against the cap: it goes first
  if (!state.memory) return;
  const proposals = state.memory.proposals.filter((p) => !counted || counted.has(p.id));
  const result = await decideAll(proposals, "accept", guesses);
  if (result === null) return;
  const failed = failures.length;
  const all = !result.gone ? `Accepted ${group ? "the" : "all"} ${plural(result.done, "suggestion")}${group ? " from that conversation" : ""}: they are now in your memory.`
    : result.done ? `Accepted ${plural(result.done, "suggestion")}: they are now in your memory.` : "Nothing was accepted here.";
  say((failed ? outcome("Accepted", proposals.length, result, group ? " from that conversation" : "") : all) + replacedWords(result.replaced, result.unreplaced)
    + goneWords(result), failed ? "error" : "ok", failed ? "bulk_partial" : "");
  renderBulk();
  focusNode(failed ? $("bulk-report") : $("proposals-heading"));
}

/** Reject an agent's repeats, one request each: {failed, stopped}, or null once signed out (or refused: reported). */
async function rejectRepeats(agent) {
  const still = signedInAsNow();
  const repeats = (state.memory.repeats || []).filter((r) => r.agent === agent);
  const done = new Set();
  let failed = 0;
  for (const repeat of repeats) {
    try {
      await api("POST", `v1/memory/${encodeURIComponent(repeat.id)}/reject`);
      if (!still()) return null;
      done.add(repeat.id);
    } catch (err) {
      if (!still()) return null;
      if (err.status === 401 || err.status === 403) {
        await deps.report(err, "reject"); // signs out: nothing after this would be this person's
        return null;
      }
      if (err.code === "not_found") done.add(repeat.id); // dismissed elsewhere meanwhile: gone all the same
      else if (err.code === "network") return { failed: repeats.length - done.size, stopped: true };
      else failed += 1;
    }
  }
  if (!still()) return null;
  state.etag = null;
  state.memory = { ...state.memory, repeats: state.memory.repeats.filter((r) => !done.has(r.id)) };
  return { failed, stopped: false };
}

function repeatWords(result, agent) {
  if (!result.failed) return "";
  return ` ${plural(result.failed, "repeat")} from ${agentQuoted(agent)} could not be dismissed${result.stopped ? ": the connection was lost" : ""}. Try again.`;
}

async function dismissRepeats(agent) {
  const result = await rejectRepeats(agent);
  if (result === null) return;
  changed();
  await deps.reload();
  say(result.failed ? repeatWords(result, agent).trim() : `Dismissed the repeats from ${agentQuoted(agent)}: their places are free.`, result.failed ? "error" : "ok");
  focusNode($("proposals-heading"));
}

async function rejectFrom(agent) {
  const repeated = await rejectRepeats(agent);
  if (repeated === null) return;
  const proposals = state.memory.proposals.filter((p) => p.agent === agent);
  const result = await decideAll(proposals, "reject");
  if (result === null) return;
  const from = ` from ${agentQuoted(agent)}`;
  const bad = failures.length || repeated.failed;
  say((failures.length ? outcome("Rejected", proposals.length, result, from)
    : result.done || !result.gone ? `Rejected ${plural(result.done, "suggestion")}${from}: they were deleted.` : "Nothing was rejected here.")
    + goneWords(result) + repeatWords(repeated, agent), bad ? "error" : "ok");
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
    else if (button.getAttribute("data-action") === "dismiss-repeats") run(() => dismissRepeats(button.getAttribute("data-agent")));
  });
  $("proposals").addEventListener("click", (event) => {
    const button = event.target.closest("button[data-action=accept-group]");
    if (button && !button.disabled && state.memory) run(() => acceptAll(button.getAttribute("data-group")));
  });
}

