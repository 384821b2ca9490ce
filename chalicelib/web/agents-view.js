/*
 * The Agents tab: each agent in words (when it last read your memory, what came from it, what waits),
 * its two switches, and forgetting what it — or one conversation of it — suggested, behind a dialog
 * that counts. Imports helpers and the store only; app.js hands in the rest (reload, report, showTab). Hooks: #panel-agents, #agents (li[data-testid=agent][data-agent]), #agents-empty; in a row
 * [data-testid=agent-read|agent-entries|agent-waiting|agent-proposed], input[data-switch=read|propose],
 * button[data-action=forget-agent]; on entries and suggestions button[data-action=forget-conversation];
 * #agent-forget-dialog, #agent-forget-text (data-count), #agent-forget-confirm, #agent-forget-cancel.
 * Connections: connect-form.js ("Connect an agent") and connections.js (each agent's connections, Revoke).
 */

import { api } from "./api.js";
import { agentItem, quoted } from "./agent-item.js";
import { wireConnectForm } from "./connect-form.js";
import { agentsOnlyConnected, loadConnections, wireConnections } from "./connections.js";
import { $, focusNode, plural } from "./dom.js";
import { say } from "./status.js";
import { agentLabel } from "./words.js";
import { on, onChange, run, signedInAsNow, state } from "./store.js";

let deps = { reload: async () => {}, report: async () => {}, showTab: () => {} };
let pending = null; // what the open dialog will forget: {agent, session, count, returnTo}
let loads = 0;

export function renderAgents() {
  // An agent connected but never used yet still gets a row, to list its connection under.
  const rows = state.agents === null ? [] : [...state.agents, ...agentsOnlyConnected(state.agents)];
  $("agents").replaceChildren(...rows.map(agentItem));
  $("agents").hidden = rows.length === 0;
  $("agents-empty").hidden = state.agents === null || rows.length !== 0;
}

export async function loadAgents() {
  const seq = ++loads;
  try {
    // Paged (issue 37 #10): the first page, then each `next` (a person has at most a few hundred agents).
    const connected = loadConnections();
    connected.catch(() => {}); // awaited below; an early return must not leave it unhandled
    let [rows, next, pages] = [[], null, 0];
    do {
      const data = await api("GET", next === null ? "v1/agents" : `v1/agents?next=${encodeURIComponent(next)}`);
      if (seq !== loads || !state.token) return false;
      rows = rows.concat(data && Array.isArray(data.agents) ? data.agents : []);
      next = data && typeof data.next === "string" ? data.next : null;
    } while (next !== null && ++pages < 20);
    await connected;
    if (seq !== loads || !state.token) return false;
    state.agents = rows;
    renderAgents();
    return true;
  } catch (err) {
    if (seq === loads) await deps.report(err, "agents");
    return false;
  }
}

function focusAgent(agent) {
  const li = document.querySelector(`#agents li[data-agent="${CSS.escape(agent)}"]`);
  focusNode(li ? li.querySelector(".agent-name") : $("agents-heading"));
}

/** Open the Agents tab at one agent's row (a journal row's link). */
export async function showAgent(agent) {
  deps.showTab("agents");
  await loadAgents();
  focusAgent(agent);
}

async function setSwitch(input) {
  const name = input.getAttribute("data-switch");
  const agent = input.getAttribute("data-agent");
  const wanted = input.checked;
  if (state.busy) {
    input.checked = !wanted;
    return;
  }
  const still = signedInAsNow();
  await run(async () => {
    try {
      const row = await api("PUT", `v1/agents/${encodeURIComponent(agent)}`, { [name]: wanted });
      if (!still()) return;
      const rows = state.agents || [];
      const at = rows.findIndex((r) => r.agent === agent);
      if (row && at >= 0) rows[at] = row;
      say(name === "read"
        ? (wanted ? `${quoted(agent)} may read your memory again.` : `${quoted(agent)} can no longer read your memory: its conversations get nothing from it.`)
        : (wanted ? `${quoted(agent)} may suggest entries again.` : `${quoted(agent)} can no longer suggest anything: its suggestions are refused.`), "ok");
      renderAgents();
      // Asked again: a list still on its way may have been read before this change (it is dropped), and
      // it may have brought other news (a new agent's row, counts) that must not be lost with it.
      await loadAgents();
      if (!still()) return;
      const again = document.querySelector(`#agents input[data-agent="${CSS.escape(agent)}"][data-switch="${name}"]`);
      if (again) again.focus();
    } catch (err) {
      if (!still()) return;
      input.checked = !wanted;
      await deps.report(err, "agents");
    }
  });
}

/* ---------- forgetting what an agent, or one conversation, suggested ---------- */

function conversationCount(agent, session) {
  const mem = state.memory || { items: [], proposals: [] };
  const from = (e) => e.origin === "agent" && e.agent === agent && (e.source || {}).session_id === session;
  return { entries: mem.items.filter(from).length, waiting: mem.proposals.filter(from).length };
}

function openDialog(what, returnTo, recounted = false) {
  pending = { ...what, returnTo };
  const counted = `${plural(what.entries, "entry", "entries")} and ${plural(what.waiting, "waiting suggestion")}`;
  const text = $("agent-forget-text");
  text.dataset.count = String(what.entries + what.waiting);
  const again = recounted ? "The numbers changed while this was open. " : "";
  text.textContent = what.session
    ? `${again}This will forget ${counted} from this conversation with ${quoted(what.agent)}. Its other conversations and your own entries are not touched.`
    : `${again}This will forget ${counted} that came from ${quoted(what.agent)}. Your own entries are not touched.`;
  $("agent-forget-title").textContent = what.session ? "Forget everything from this conversation?" : `Forget everything ${agentLabel(what.agent)} suggested?`;
  const dialog = $("agent-forget-dialog");
  if (!dialog.open) {
    if (typeof dialog.showModal === "function") dialog.showModal();
    else dialog.setAttribute("open", "");
  }
  $("agent-forget-cancel").focus();
}

function closeDialog(focusBack) {
  const dialog = $("agent-forget-dialog");
  if (typeof dialog.close === "function") dialog.close();
  else dialog.removeAttribute("open");
  // A closed dialog keeps no agent's name or counts in the document (the next person could read them).
  $("agent-forget-title").textContent = "";
  $("agent-forget-text").textContent = "";
  delete $("agent-forget-text").dataset.count;
  const back = pending && pending.returnTo;
  pending = null;
  if (focusBack && back && back.isConnected) back.focus();
}

async function openForAgent(button) {
  const agent = button.getAttribute("data-agent");
  await loadAgents(); // the count in the dialog is what is stored now
  const row = (state.agents || []).find((r) => r.agent === agent);
  if (!row || !(row.entries + row.waiting)) {
    say(`Nothing from ${quoted(agent)} is left to forget.`, "info");
    return;
  }
  const again = document.querySelector(`#agents button[data-action=forget-agent][data-agent="${CSS.escape(agent)}"]`);
  openDialog({ agent, session: null, entries: row.entries, waiting: row.waiting }, again);
}

function openForConversation(button) {
  if (state.busy) return; // a forget (or any change) is on its way: its counts would be stale at once
  const li = button.closest("li[data-entry-id], li[data-proposal-id]");
  const id = li && (li.getAttribute("data-entry-id") || li.getAttribute("data-proposal-id"));
  const mem = state.memory || { items: [], proposals: [] };
  const entry = [...mem.items, ...mem.proposals].find((e) => e.id === id);
  // A conversation's group of suggestions (review-groups.js) names its agent and session on the button itself.
  const agent = entry ? entry.agent : button.getAttribute("data-agent");
  const session = entry ? (entry.source || {}).session_id : button.getAttribute("data-session");
  if (!agent || !session) return;
  openDialog({ agent, session, ...conversationCount(agent, session) }, button);
}

/** What is stored now for the open dialog: memory (a conversation) or the agents' rows (an agent) asked again. */
async function countNow(what) {
  if (what.session) {
    await deps.reload();
    return conversationCount(what.agent, what.session);
  }
  await loadAgents();
  const row = (state.agents || []).find((r) => r.agent === what.agent);
  return row ? { entries: row.entries, waiting: row.waiting } : { entries: 0, waiting: 0 };
}

async function confirmForget() {
  const what = pending;
  if (!what) return;
  const still = signedInAsNow();
  await run(async () => {
    // Counted again on confirm: a suggestion that arrived while the dialog was open is not forgotten unseen.
    const now = await countNow(what);
    if (!still() || pending !== what) return;
    if (now.entries !== what.entries || now.waiting !== what.waiting) {
      openDialog({ ...what, ...now }, what.returnTo, true);
      return;
    }
    closeDialog(false);
    // Not back on the button that opened it (where the browser returns focus): a second Enter would open it again.
    const back = $("proposals").contains(what.returnTo) ? $("proposals-heading") : $("entries-heading"); // its list's
    focusNode($("panel-agents").hidden ? back : $("agents-heading"));
    try {
      const body = what.session ? { session_id: what.session } : {};
      const data = await api("POST", `v1/agents/${encodeURIComponent(what.agent)}/forget`, body);
      if (!still()) return;
      const n = data && Number.isInteger(data.deleted) ? data.deleted : 0;
      say(`Forgot ${plural(n, "item")} from ${what.session ? "that conversation with " : ""}${quoted(what.agent)}.`, "ok");
      state.etag = null; // what GET /v1/memory shows has changed
      await deps.reload();
      if (!still()) return;
      if ($("panel-agents").hidden) return focusNode(back);
      await loadAgents();
      if (still()) focusAgent(what.agent);
    } catch (err) {
      if (!still()) return;
      await deps.report(err, "forget_agent");
    }
  });
}

/* ---------- wiring ---------- */

function onConversationClick(event) {
  const button = event.target.closest("button[data-action=forget-conversation]");
  if (button) openForConversation(button);
}

export function wireAgents(given) {
  deps = { ...deps, ...given };
  wireConnections({ render: renderAgents, report: (err, action) => deps.report(err, action) });
  wireConnectForm({ reload: loadConnections, report: (err, action) => deps.report(err, action) });
  $("agents").addEventListener("change", (event) => {
    if (event.target.matches("input[data-switch]")) setSwitch(event.target);
  });
  $("agents").addEventListener("click", (event) => {
    const button = event.target.closest("button[data-action=forget-agent]");
    if (button) run(() => openForAgent(button));
  });
  $("entries").addEventListener("click", onConversationClick);
  $("proposals").addEventListener("click", onConversationClick);
  $("journal").addEventListener("click", (event) => {
    const link = event.target.closest("a[data-agent-link]");
    if (!link) return;
    event.preventDefault();
    showAgent(link.getAttribute("data-agent-link"));
  });
  $("agent-forget-cancel").addEventListener("click", () => closeDialog(true));
  $("agent-forget-confirm").addEventListener("click", confirmForget);
  $("agent-forget-dialog").addEventListener("cancel", (event) => { event.preventDefault(); closeDialog(true); });
  on("tab", (name) => { if (name === "agents" && state.token) loadAgents(); });
  // Signed out: nothing of that person's agents stays drawn, and a load still in flight is dropped.
  on("signed-out", () => {
    loads += 1;
    if (pending) closeDialog(false);
    renderAgents();
  });
  // Memory changed (a poll, an accept): the counts shown here follow while the tab is open.
  onChange(() => { if (!$("panel-agents").hidden && state.agents !== null && !state.busy) loadAgents(); });
}
