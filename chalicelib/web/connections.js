/*
 * A person's connections on the Agents tab: each agent's row lists its connections (made, expires, last used,
 * trusted) with Revoke behind a dialog that says what stops working. Not a view: agents-view.js draws the rows
 * and wires this; connect-form.js makes new ones. Nothing of one person's connections stays after sign-out.
 *
 * Hooks: in an agent's row ul[data-testid=connections] > li[data-testid=connection][data-connection-id],
 * button[data-action=revoke-connection]; #revoke-dialog, #revoke-text, #revoke-confirm, #revoke-cancel.
 */

import { api } from "./api.js";
import { $, el, focusNode, formatDate, nextId } from "./dom.js";
import { say } from "./status.js";
import { on, run, signedInAsNow } from "./store.js";
import { ago } from "./words.js";

let connections = null; // GET /v1/connections's rows for the person signed in, or null before the first load
let loads = 0;
let revoking = null; // {connection, returnTo}
let deps = { render: () => {}, report: async () => {} };

/** Whether two agent names name the same agent: the one place the page compares them (a fold may come here). */
export function sameAgent(a, b) {
  return a === b;
}

export function connectionsOf(agent) {
  return (connections || []).filter((c) => sameAgent(c.agent, agent));
}

/** Agents that have a connection but never used memory yet: they still get a row to list it under. */
export function agentsOnlyConnected(rows) {
  const names = [];
  for (const c of connections || []) {
    if (!rows.some((r) => sameAgent(r.agent, c.agent)) && !names.some((n) => sameAgent(n, c.agent))) names.push(c.agent);
  }
  return names.map((agent) => ({ agent, read: true, propose: true, entries: 0, waiting: 0, last_read_at: null, last_proposal_at: null }));
}

export async function loadConnections() {
  const seq = ++loads;
  const still = signedInAsNow();
  try {
    const data = await api("GET", "v1/connections");
    if (seq !== loads || !still()) return false;
    connections = data && Array.isArray(data.connections) ? data.connections : [];
    deps.render();
    return true;
  } catch (err) {
    if (seq === loads && still()) await deps.report(err, "connections");
    return false;
  }
}

/* ---------- one connection, in words, under its agent ---------- */

function usedWords(c) {
  return c.last_used_at ? `Last used ${ago(c.last_used_at)}.` : "Never used yet: nothing has connected with it.";
}

function connectionItem(c) {
  return el("li", { className: "connection", attrs: { "data-testid": "connection", "data-connection-id": c.id } }, [
    el("p", { text: `Connected ${formatDate(c.created_at)} · expires ${formatDate(c.expires_at)}`, attrs: { "data-testid": "connection-dates" } }),
    el("p", { text: usedWords(c), attrs: { "data-testid": "connection-used" } }),
    c.client ? el("p", { text: `Signed in from ${c.client.shown || c.client.name}: revoking ends its access at its next call.`,
      attrs: { "data-testid": "connection-client" } }) : null,
    el("p", { className: "hint", attrs: { "data-testid": "connection-trust" },
      text: c.trusted ? "Trusted: its suggestions are not marked as possibly influenced by outside content."
        : "Not trusted: its suggestions are marked as possibly influenced by outside content." }),
    el("div", { className: "button-row" }, [el("button", { className: "button button-small button-danger", text: "Revoke…",
      attrs: { type: "button", "data-action": "revoke-connection", "data-connection-id": c.id,
        "aria-label": `Revoke the connection for ${c.agent} made ${formatDate(c.created_at)}…` } })]),
  ]);
}

/** The agent's connections, for its row (null when it has none). */
export function connectionsList(agent) {
  const mine = connectionsOf(agent);
  if (!mine.length) return null;
  const headingId = nextId("connections-heading");
  return el("div", { className: "connections" }, [
    el("h4", { text: mine.length === 1 ? "Connection" : `${mine.length} connections`, attrs: { id: headingId } }),
    el("ul", { className: "connection-list", attrs: { "data-testid": "connections", "aria-labelledby": headingId } }, mine.map(connectionItem)),
  ]);
}

/* ---------- revoking, behind a dialog that says what stops working ---------- */

function buildDialog() {
  return el("dialog", { attrs: { id: "revoke-dialog", "aria-labelledby": "revoke-title", "aria-describedby": "revoke-text" } }, [
    el("h2", { text: "Revoke this connection?", attrs: { id: "revoke-title" } }),
    el("p", { attrs: { id: "revoke-text" } }),
    el("div", { className: "button-row" }, [
      el("button", { className: "button", text: "Cancel", attrs: { id: "revoke-cancel", type: "button" } }),
      el("button", { className: "button button-danger", text: "Revoke", attrs: { id: "revoke-confirm", type: "button" } }),
    ]),
  ]);
}

function openRevoke(button) {
  const c = (connections || []).find((x) => x.id === button.getAttribute("data-connection-id"));
  if (!c) return;
  revoking = { connection: c, returnTo: button };
  $("revoke-text").textContent = `Anything using this token for “${c.agent}” — a Claude Code or Claude Desktop setup, an MCP ` +
    "client, a script — stops working at its next call: it can no longer read your memory or suggest anything. " +
    "What it already suggested and your entries stay as they are.";
  const dialog = $("revoke-dialog");
  if (typeof dialog.showModal === "function") dialog.showModal();
  else dialog.setAttribute("open", "");
  $("revoke-cancel").focus();
}

function closeRevoke(focusBack) {
  const dialog = $("revoke-dialog");
  if (dialog.open && typeof dialog.close === "function") dialog.close();
  dialog.removeAttribute("open");
  $("revoke-text").textContent = ""; // the next person never reads this one's agent
  const back = revoking && revoking.returnTo;
  revoking = null;
  if (focusBack && back && back.isConnected) back.focus();
}

async function confirmRevoke() {
  const what = revoking;
  if (!what) return;
  const still = signedInAsNow();
  await run(async () => {
    closeRevoke(false);
    try {
      await api("DELETE", `v1/connections/${encodeURIComponent(what.connection.id)}`);
      if (!still()) return;
      say(`Revoked: that token for “${what.connection.agent}” no longer works.`, "ok");
      await loadConnections();
      if (still()) focusNode($("agents-heading"));
    } catch (err) {
      if (!still()) return;
      await deps.report(err, "revoke");
      await loadConnections();
    }
  });
}

/* ---------- wiring (from agents-view.js) ---------- */

export function wireConnections(given) {
  deps = { ...deps, ...given };
  document.body.append(buildDialog());
  $("agents").addEventListener("click", (event) => {
    const button = event.target.closest("button[data-action=revoke-connection]");
    if (button) openRevoke(button);
  });
  $("revoke-cancel").addEventListener("click", () => closeRevoke(true));
  $("revoke-confirm").addEventListener("click", confirmRevoke);
  $("revoke-dialog").addEventListener("cancel", (event) => { event.preventDefault(); closeRevoke(true); });
  on("signed-out", () => {
    loads += 1;
    connections = null;
    if (revoking) closeRevoke(false);
    deps.render();
  });
}

