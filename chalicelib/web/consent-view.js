/*
 * The consent screen of OAuth (docs/oauth.md): an app (Claude.ai, ChatGPT, any MCP client) asked to connect, the
 * service sent the person here as `?oauth=<request id>`, they sign in as usual and decide. Approving makes a
 * connection for the app (listed on the Agents tab, revocable there); either way the browser goes back to the app.
 *
 * The request id is taken out of the address bar at once and kept in sessionStorage only, so it survives the
 * OIDC sign-in's round trip; a sign-out drops it. The service binds the request to the first person who opens
 * it: anyone else signed in here gets "no longer waiting". Everything shown is set with textContent.
 *
 * Hooks: #consent, #consent-client, #consent-account, #consent-return, #consent-agent (+ -error), #consent-read, #consent-propose,
 * #consent-trusted, #consent-approve, #consent-deny.
 */

import { ApiError, api } from "./api.js";
import { $ } from "./dom.js";
import { clearFieldError, fieldError, say } from "./status.js";
import { on, run, signedInAsNow, state } from "./store.js";

const KEY = "memory.oauth";
let shown = null; // the request on screen: {id, client, redirect_host, agent}

/** Before anything else: `?oauth=<id>` moves from the address bar into this tab's session. */
export function captureConsent() {
  const params = new URLSearchParams(window.location.search);
  const id = params.get("oauth");
  if (id === null) return;
  if (/^[0-9a-f]{32}$/.test(id)) sessionStorage.setItem(KEY, id);
  params.delete("oauth");
  const rest = params.toString();
  window.history.replaceState(null, "", window.location.pathname + (rest ? `?${rest}` : ""));
}

function hide() {
  shown = null;
  $("consent").hidden = true;
  clearFieldError($("consent-agent"), $("consent-agent-error"));
}

function draw(request) {
  shown = request;
  const client = request.client || {};
  // The service's words (docs/oauth.md): the checked part (this device, or a host) beside the name the app gave
  // itself, never the name alone. Its site, too, is what it says of itself.
  const who = String(client.shown || "an app");
  const site = client.uri ? ` It gives its site as ${client.uri}.` : "";
  $("consent-client").textContent = `${who.charAt(0).toUpperCase()}${who.slice(1)} asks to use your memory as one of your agents.${site}`;
  // Whose memory: on a shared computer the link opens for whoever is still signed in here (docs/oauth.md).
  $("consent-account").textContent = `Approving joins it to the memory of ${state.user || "the person signed in here"}. Not you? Sign out first.`;
  $("consent-return").textContent = `Whatever you decide, you go back to ${request.redirect_host}.`;
  $("consent-agent").value = request.agent || "";
  $("consent-read").checked = true;
  $("consent-propose").checked = true;
  $("consent-trusted").checked = false;
  $("consent").hidden = false;
  $("consent-heading").focus();
}

async function openPending() {
  const id = sessionStorage.getItem(KEY);
  if (!id || !state.token) return;
  const still = signedInAsNow();
  try {
    const request = await api("GET", `v1/oauth/requests/${id}`);
    if (still() && request) draw(request);
  } catch (err) {
    if (!still()) return;
    sessionStorage.removeItem(KEY);
    if (err instanceof ApiError && err.status === 404) say("That connection request is no longer waiting: start again from the app.", "error", "not_found");
    else say("Could not load the connection request. Reload the page to try again.", "error", err.code || "consent");
  }
}

async function decide(approve) {
  if (!shown) return;
  const field = [$("consent-agent"), $("consent-agent-error")];
  clearFieldError(...field);
  const agent = $("consent-agent").value.trim();
  if (approve && !agent) {
    fieldError(...field, "Name the agent this app acts as.", "invalid_request");
    return;
  }
  const body = approve
    ? { approve: true, agent, read: $("consent-read").checked, propose: $("consent-propose").checked, trusted: $("consent-trusted").checked }
    : { approve: false };
  const id = shown.id;
  await run(async () => {
    try {
      const data = await api("POST", `v1/oauth/requests/${id}`, body);
      sessionStorage.removeItem(KEY);
      hide();
      const target = data && typeof data.redirect === "string" ? data.redirect : "";
      if (/^https?:\/\//i.test(target)) {
        say(approve ? "Connected. Going back to the app…" : "Denied. Going back to the app…", "ok");
        window.location.assign(target);
      }
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) {
        fieldError(...field, "Use letters, digits, '.', '_', ':' or '-' (at most 128).", err.code);
        return;
      }
      if (err instanceof ApiError && err.status === 409) { // nothing was made: the request still waits
        fieldError(...field, "You have as many agents as you can: name one you already have, or deny.", err.code);
        return;
      }
      sessionStorage.removeItem(KEY);
      hide();
      if (err instanceof ApiError && err.status === 404) say("That connection request is no longer waiting: start again from the app.", "error", "not_found");
      else say("Could not send your answer. Start again from the app.", "error", err.code || "consent");
    }
  });
}

export function wireConsent() {
  $("consent-form").addEventListener("submit", (event) => { event.preventDefault(); decide(true); });
  $("consent-deny").addEventListener("click", () => decide(false));
  $("consent-agent").addEventListener("input", () => clearFieldError($("consent-agent"), $("consent-agent-error")));
  on("signed-in", () => { openPending(); });
  on("signed-out", () => { sessionStorage.removeItem(KEY); hide(); });
}
