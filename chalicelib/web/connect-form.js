/*
 * "Connect an agent" on the Agents tab: a name, trust and a lifetime make a connection (POST /v1/connections),
 * whose token is shown once with the snippets to paste (Claude Code, Claude Desktop, Cursor, any MCP client,
 * curl). The token leaves the document when the person is done, leaves the tab, or signs out.
 *
 * Hooks: #connect-form, #connect-agent, #connect-trusted, #connect-days, #connect-submit, #connect-shown
 * (#connect-token, textarea[data-snippet=claude-code|claude-desktop|cursor|mcp|curl], #connect-done).
 */

import { api, apiUrl } from "./api.js";
import { $, el, focusNode } from "./dom.js";
import { say } from "./status.js";
import { on, run, signedInAsNow } from "./store.js";

let deps = { reload: async () => {}, report: async () => {} };

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
      await deps.reload();
    } catch (err) {
      if (still()) await deps.report(err, "connect");
    }
  });
}

/* ---------- wiring (from agents-view.js) ---------- */

export function wireConnectForm(given) {
  deps = { ...deps, ...given };
  $("panel-agents").prepend(buildForm());
  $("connect-form").addEventListener("submit", connect);
  $("connect-shown").addEventListener("click", (event) => {
    if (event.target.closest("#connect-done")) {
      clearShown();
      focusNode($("connect-heading"));
    }
  });
  on("tab", (name) => { if (name !== "agents") clearShown(); }); // the token leaves the screen with the tab
  on("signed-out", () => {
    clearShown();
    $("connect-form").reset();
  });
}
