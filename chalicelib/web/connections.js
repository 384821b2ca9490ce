/*
 * Connections on the Agents tab: "Connect an agent" (a name, trust, lifetime) shows its token once with the
 * snippets to paste; each agent's row lists its connections (made, expires, last used, trusted) with Revoke
 * behind a dialog that says what stops working. Not a view: agents-view.js draws the rows and wires this.
 * Nothing of one person's connections — above all a token — stays in the document after they sign out.
 *
 * Hooks: #connect-form, #connect-agent, #connect-trusted, #connect-days, #connect-submit, #connect-shown
 * (#connect-token, textarea[data-snippet=claude-code|claude-desktop|cursor|mcp|curl], #connect-done);
 * in an agent's row ul[data-testid=connections] > li[data-testid=connection][data-connection-id],
 * button[data-action=revoke-connection]; #revoke-dialog, #revoke-text, #revoke-confirm, #revoke-cancel.
 */

import { api, apiUrl } from "./api.js";
import { $, el, focusNode, formatDate, nextId } from "./dom.js";
import { say } from "./status.js";
import { on, run, signedInAsNow, state } from "./store.js";
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

/* ---------- connecting: the form, and the token shown once ---------- */

function field(label, control, hint) {
  const id = control.id;
  return el("div", { className: "field" }, [el("label", { text: label, attrs: { for: id } }), control,
    hint ? el("p", { className: "hint", text: hint, attrs: { id: `${id}-hint` } }) : null]);
}

function buildForm() {
  const name = el("input", { attrs: { id: "connect-agent", type: "text", required: true, maxlength: 128, autocomplete: "off",
    spellcheck: "false", pattern: "[A-Za-z0-9._:\\-]+", placeholder: "claude-code", "aria-describedby": "connect-agent-hint" } });
  const days = el("select", { attrs: { id: "connect-days" } }, [30, 90, 180, 365].map((n) =>
    el("option", { text: `${n} days`, attrs: { value: n, selected: n === 90 } })));
  const trusted = el("input", { attrs: { id: "connect-trusted", type: "checkbox" } });
  return el("section", { className: "card", attrs: { "aria-labelledby": "connect-heading", id: "connect-card" } }, [
    el("h2", { text: "Connect an agent", attrs: { id: "connect-heading", tabindex: "-1" } }),
    el("p", { className: "hint", text: "Give one of your own agents — Claude Code, Claude Desktop, Cursor, any MCP client or a " +
      "script — a key of its own. It can read what you share and suggest notes for your review, as that agent and for " +
      "you only. No AWS role or credentials file is involved, and you can revoke it here at any time." }),
    el("form", { attrs: { id: "connect-form", novalidate: true } }, [
      field("Agent name", name, "Letters, digits and . _ : - (it is how the agent appears here and on its suggestions)."),
      el("div", { className: "field-row" }, [
        field("Expires after", days),
        el("div", { className: "field field-check" }, [trusted, el("label", { text: "Trust it (its suggestions are not marked untrusted)",
          attrs: { for: "connect-trusted" } })]),
      ]),
      el("div", { className: "button-row" }, [el("button", { className: "button", text: "Connect",
        attrs: { id: "connect-submit", type: "submit" } })]),
    ]),
    el("div", { attrs: { id: "connect-shown", hidden: true, role: "region", "aria-labelledby": "connect-shown-heading" } }),
  ]);
}

function snippets(token) {
  const base = apiUrl("").replace(/\/$/, "");
  const mcp = apiUrl("mcp");
  const json = (value) => JSON.stringify(value, null, 2);
  return [
    ["claude-code", "Claude Code", `claude mcp add --transport http personal-memory ${mcp} --header "Authorization: Bearer ${token}"`],
    ["claude-desktop", "Claude Desktop (claude_desktop_config.json)", json({ mcpServers: { "personal-memory": {
      command: "personal-memory-mcp", args: ["--base-url", base], env: { PERSONAL_MEMORY_TOKEN: token } } } })],
    ["cursor", "Cursor (~/.cursor/mcp.json)", json({ mcpServers: { "personal-memory": { url: mcp, headers: { Authorization: `Bearer ${token}` } } } })],
    ["mcp", "Any MCP client (Streamable HTTP)", `URL: ${mcp}\nHeader: Authorization: Bearer ${token}`],
    ["curl", "curl", `curl -H "Authorization: Bearer ${token}" ${base}/v1/agent/memory`],
  ];
}

function clearShown() {
  const shown = $("connect-shown");
  if (!shown) return;
  shown.replaceChildren();
  shown.hidden = true;
}

function showToken(made) {
  const shown = $("connect-shown");
  const token = el("input", { className: "token", attrs: { id: "connect-token", type: "text", readonly: true, value: made.token,
    "aria-describedby": "connect-token-hint", spellcheck: "false" } });
  shown.replaceChildren(
    el("h3", { text: `Connected “${made.agent}”`, attrs: { id: "connect-shown-heading", tabindex: "-1" } }),
    el("label", { text: "Its token", attrs: { for: "connect-token" } }), token,
    el("p", { className: "hint", attrs: { id: "connect-token-hint" },
      text: "Shown this once: copy it into your agent's configuration now. Only a keyed hash of it is kept, so it cannot be shown again." }),
    ...snippets(made.token).map(([key, title, text]) => el("details", { className: "snippet" }, [
      el("summary", { text: title }),
      el("textarea", { text, attrs: { readonly: true, rows: text.split("\n").length + 1, spellcheck: "false",
        "data-snippet": key, "aria-label": `${title}: what to paste` } })])),
    el("div", { className: "button-row" }, [el("button", { className: "button", text: "Done: hide the token",
      attrs: { id: "connect-done", type: "button" } })]),
  );
  shown.hidden = false;
  focusNode($("connect-shown-heading"));
}

async function connect(event) {
  event.preventDefault();
  const agent = $("connect-agent").value.trim();
  if (!agent || !/^[A-Za-z0-9._:-]{1,128}$/.test(agent) || /^\.+$/.test(agent)) {
    say("Name the agent with letters, digits and . _ : - (for example claude-code).", "error", "invalid_request");
    $("connect-agent").focus();
    return;
  }
  const still = signedInAsNow();
  await run(async () => {
    try {
      const made = await api("POST", "v1/connections", { agent, trusted: $("connect-trusted").checked,
        expires_in_days: Number($("connect-days").value) });
      if (!still()) return;
      $("connect-form").reset();
      showToken(made);
      say(`Connected “${made.agent}”. Copy its token now: it is shown only once.`, "ok");
      await loadConnections();
    } catch (err) {
      if (still()) await deps.report(err, "connect");
    }
  });
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
  const panel = $("panel-agents");
  panel.prepend(buildForm());
  document.body.append(buildDialog());
  $("connect-form").addEventListener("submit", connect);
  $("connect-shown").addEventListener("click", (event) => {
    if (event.target.closest("#connect-done")) {
      clearShown();
      focusNode($("connect-heading"));
    }
  });
  $("agents").addEventListener("click", (event) => {
    const button = event.target.closest("button[data-action=revoke-connection]");
    if (button) openRevoke(button);
  });
  $("revoke-cancel").addEventListener("click", () => closeRevoke(true));
  $("revoke-confirm").addEventListener("click", confirmRevoke);
  $("revoke-dialog").addEventListener("cancel", (event) => { event.preventDefault(); closeRevoke(true); });
  on("tab", (name) => { if (name !== "agents") clearShown(); }); // the token leaves the screen with the tab
  on("signed-out", () => {
    loads += 1;
    connections = null;
    clearShown();
    $("connect-form").reset();
    if (revoking) closeRevoke(false);
    deps.render();
  });
}

export const connectionsLoaded = () => connections !== null && state.token !== null;
