/*
 * Memory page, entry module: wires the views to the page and starts it. Each concern has its module:
 *   api.js (HTTP, ETags) · store.js (state, one change at a time) · session.js (sign-in/out) ·
 *   memory.js (load, errors) · live.js (polling while visible, waiting count) · status.js (messages,
 *   field errors) · words.js (everything said in words) · item.js (an entry's look, edit fields) ·
 *   entries-view.js (list, edit, pin, forget with undo) · filter.js (search and filter) ·
 *   proposals-view.js (accept, edit and accept, reject) · add-form.js · dialogs.js (export, forget
 *   everything) · journal-view.js · tabs.js · dom.js (text-only DOM helpers) · agents-view.js (the
 *   Agents tab: switches per agent, forget what an agent or a conversation suggested) ·
 *   review-bulk.js (accept all, reject all from an agent).
 *
 * Safety rules every module keeps: data is rendered with textContent/createElement (never as HTML);
 * no inline script or style (the CSP forbids both); the bearer token lives in sessionStorage only;
 * every URL is relative to the page, so it works at "/" and under a stage prefix such as "/api/".
 *
 * Hooks for browser tests (stable ids and attributes):
 *   Sign-in: #signin, #signin-user, #signin-button, #signin-oidc-button, #account, #account-user, #signout
 *   Status: #status (data-kind, data-code; cleared on the next action or tab change); #live-note
 *   Tabs: #tab-memory (with #tab-badge: suggestions waiting), #tab-journal, #tab-agents, #panel-memory,
 *         #panel-journal, #panel-agents (its hooks: agents-view.js; bulk review's: review-bulk.js)
 *   Switch and counts: #memory-enabled, #memory-state, #counts, #count-entries, #count-proposals
 *   Add: #add-form, #add-fieldset (disabled while off), #add-text, #add-text-error, #add-bytes, #add-kind,
 *        #add-pinned, #add-expiry, #add-expiry-error, #add-submit, #add-error, #add-off-note
 *   Lists: #entries, #entries-empty, #filter-form, #filter-text, #filter-kind, #filter-origin,
 *          #filter-tainted, #filter-summary, #entries-no-match, #proposals, #proposals-empty, #proposals-off-note
 *   Undo: #undo-bar, #undo-text, #undo · Data: #export, #forget-all, #forget-all-dialog, #forget-all-text,
 *         #forget-all-confirm, #forget-all-cancel · Journal: #journal, #journal-more, #journal-empty
 * Entries: li[data-testid=entry][data-entry-id], proposals
 * li[data-testid=proposal][data-proposal-id], buttons [data-action=edit|pin|forget|save|cancel|accept|
 * correct|accept-changes|reject], field errors .field-error; <body data-busy="true"> while a change is in flight.
 */

import { renderAddForm, wireAddForm } from "./add-form.js";
import { wireAgents } from "./agents-view.js";
import { api } from "./api.js";
import { closeForgetAll, confirmForgetAll, exportAll, openForgetAll } from "./dialogs.js";
import { $, keepingFocus } from "./dom.js";
import { renderEntries, wireEntries } from "./entries-view.js";
import { wireFilter } from "./filter.js";
import { loadMoreJournal } from "./journal-view.js";
import { renderWaiting } from "./live.js";
import { loadMemory, reportError } from "./memory.js";
import { renderProposals, wireProposals } from "./proposals-view.js";
import { renderBulk, wireBulk } from "./review-bulk.js";
import { completeOidc, devSignIn, oidcSignIn, restoreSession, showApp, showSignIn, signOut } from "./session.js";
import { clearStatus, say } from "./status.js";
import { changed, onAction, onChange, run, state } from "./store.js";
import { selectTab, wireTabs } from "./tabs.js";

function renderSwitch() {
  const mem = state.memory;
  const sw = $("memory-enabled");
  sw.checked = mem.enabled;
  sw.disabled = false; // usable only once the server's state is on screen
  $("memory-state").textContent = mem.enabled ? "On" : "Off";
  document.body.classList.toggle("memory-off", !mem.enabled);
  const pending = state.pendingForget && mem.items.some((e) => e.id === state.pendingForget.entry.id) ? 1 : 0;
  $("count-entries").textContent = `${mem.items.length - pending} / ${mem.limits.entries} entries`;
  $("count-proposals").textContent = `${mem.proposals.length} / ${mem.limits.proposals} waiting`;
  $("entries-empty-off").hidden = mem.enabled;
  $("entries-empty-on").hidden = !mem.enabled;
}

function render() {
  if (!state.memory) return;
  keepingFocus(() => {
    renderSwitch();
    renderAddForm();
    renderProposals();
    renderBulk();
    renderEntries();
    renderWaiting();
  });
}

async function setEnabled() {
  const sw = $("memory-enabled");
  const wanted = sw.checked;
  if (state.busy || !state.memory) {
    sw.checked = !wanted; // another change is in flight: leave the switch as the server has it
    return;
  }
  await run(async () => {
    try {
      const data = await api("PUT", "v1/memory/settings", { enabled: wanted });
      state.memory.enabled = Boolean(data && data.enabled);
      state.etag = null; // what GET shows has changed: the next load must not be a 304
      say(wanted
        ? "Memory is on. Agents you allow can now read it and suggest additions."
        : "Memory is off. Agents get nothing and nothing can be added; your entries are kept and you can still edit or forget them.", "ok");
      changed();
    } catch (err) {
      sw.checked = !wanted;
      await reportError(err, "settings");
    }
  });
}

function wire() {
  onChange(render);
  onAction(clearStatus);
  $("signin-dev-form").addEventListener("submit", devSignIn);
  $("signin-oidc-button").addEventListener("click", () => {
    oidcSignIn().catch(() => say("Could not start sign-in in this browser.", "error", "signin"));
  });
  $("signout").addEventListener("click", () => { signOut(true); say("Signed out.", "info"); });
  $("memory-enabled").addEventListener("change", setEnabled);
  wireAddForm();
  wireEntries();
  wireFilter();
  wireProposals();
  wireTabs();
  wireBulk({ reload: () => loadMemory(true), report: reportError });
  wireAgents({ reload: () => loadMemory(true), report: reportError, showTab: (name) => selectTab(name, false) });
  $("forget-all").addEventListener("click", () => { clearStatus(); openForgetAll(); });
  $("forget-all-cancel").addEventListener("click", closeForgetAll);
  $("forget-all-confirm").addEventListener("click", confirmForgetAll);
  $("forget-all-dialog").addEventListener("cancel", (event) => { event.preventDefault(); closeForgetAll(); });
  $("export").addEventListener("click", () => run(exportAll));
  $("journal-more").addEventListener("click", () => run(loadMoreJournal));
}

async function start() {
  wire();
  restoreSession();
  try {
    state.config = await api("GET", "page-config");
  } catch (_err) {
    $("signin-loading").textContent = "Could not load the sign-in settings. Reload the page to try again.";
    return;
  }
  const params = new URLSearchParams(window.location.search);
  if (state.config && state.config.sign_in === "oidc" && (params.has("code") || params.has("error"))) {
    await completeOidc(params);
  }
  if (state.token) await showApp();
  else showSignIn();
}

// Module scripts run after the document is parsed (they are deferred), so the page is ready here.
start();
