/*
 * Memory page, entry module: wires the views to the page and starts it.
 *
 * How the modules depend on each other (STYLE.md item 13; tests/browser/test_module_graph.py fails on a cycle):
 *
 *   app.js ──wires──▶ views ──▶ memory.js, item.js, status.js, words.js, dom.js ──▶ api.js, store.js
 *                     session.js ─┘
 *
 *   Services (import no view): api.js (HTTP, ETags) · store.js (state, events, commands, one change at a
 *   time, what the filter shows) · memory.js (load GET /v1/memory, report errors) · status.js (messages,
 *   field errors) · words.js (everything said in words) · item.js (an entry's look, edit fields, where an
 *   error belongs, relative times) · dom.js (text-only DOM helpers).
 *   Views (each renders from `state` and sends actions through api.js; none imports another view):
 *   add-form.js · entries-view.js (list, edit, pin) · undo.js (forget with a few seconds to undo) ·
 *   filter.js · proposals-view.js · dialogs.js (export, forget everything) · journal-view.js · tabs.js ·
 *   live.js (polling as the server advises, the waiting count) · session.js (sign-in and out) ·
 *   agents-view.js (the Agents tab: switches per agent, forget what an agent or a conversation suggested) ·
 *   review-bulk.js (accept all, a conversation's "accept these N", reject all from an agent) · consent-view.js (an
 *   app asks to connect: OAuth). Suggestions are drawn grouped by conversation (review-groups.js) in compact rows
 *   (proposal-row.js): helpers, no view.
 *   Nothing imports app.js or session.js: a module that needs sign-out asks the store for it.
 *
 * Talking across modules goes through store.js, never an import:
 *   changed()/onChange(fn)   state changed: every view re-renders from it (app.js's render)
 *   emit(name)/on(name, fn)  something happened, any number of listeners:
 *     "action"      the person started a change (status.js's old message is cleared)
 *     "signed-in"   before the first load (tabs.js shows Memory, live.js starts asking)
 *     "signing-out" the token is still there (undo.js sends a pending forget, live.js stops)
 *     "signed-out"  the state is empty; views clear what they drew outside it (journal, forms)
 *     "answered"    GET /v1/memory answered (200 or 304) · "loaded" a 200 was taken into `state`
 *     "polled"      a poll finished (journal-view.js refreshes while shown; times are redrawn)
 *     "tab"         a tab was selected (its name)
 *     "filtered"    the search or filter changed (only the entries list is drawn again)
 *   handle(name, fn)/ask(name, ...)  a command owned by one module: "signOut" (session.js),
 *     "forget" and "settleForget" (undo.js).
 * A new view follows the same rule (as agents-view.js and review-bulk.js do): render(), wire(), listen,
 * ask; add it to SCRIPT_MODULES in chalicelib/web/__init__.py.
 *
 * Safety rules every module keeps: data is rendered with textContent/createElement (never as HTML);
 * no inline script or style (the CSP forbids both); the bearer token lives in sessionStorage only;
 * every URL is relative to the page, so it works at "/" and under a stage prefix such as "/api/".
 *
 * Hooks for browser tests (stable ids and attributes):
 *   Sign-in: #signin, #signin-user, #signin-user-error, #signin-button, #signin-oidc-button, #account,
 *            #account-user, #signout
 *   Status: #status (data-kind, data-code; cleared on the next action, a field error or a tab change); #live-note
 *   Tabs: #tab-memory (with #tab-badge: suggestions waiting), #tab-journal, #tab-agents, #panel-memory,
 *         #panel-journal, #panel-agents (its hooks: agents-view.js; bulk review's: review-bulk.js)
 *   Switch and counts: #memory-enabled, #memory-state, #counts, #count-entries, #count-proposals, #memory-loading,
 *            #memory-load-failed and #memory-retry (the first load failed: nothing about the memory is shown)
 *   Add: #add-form, #add-fieldset (disabled while off), #add-text, #add-text-error, #add-bytes, #add-kind,
 *        #add-pinned, #add-expiry, #add-expiry-error, #add-submit, #add-error, #add-off-note
 *   Lists: #entries, #entries-empty, #filter-form, #filter-text, #filter-kind, #filter-origin,
 *          #filter-tainted, #filter-summary, #entries-no-match, #proposals, #proposals-empty, #proposals-off-note,
 *          #proposals-only-tainted (in #proposals-filter), #proposals-none-tainted
 *   Undo: #undo-bar, #undo-text, #undo · Data: #export, #forget-all, #forget-all-dialog, #forget-all-text,
 *         #forget-all-confirm, #forget-all-cancel · Journal: #journal, #journal-more, #journal-empty,
 *         [data-testid=journal-text], details.ids-details (an operator's ARN and request id)
 * Entries: li[data-testid=entry][data-entry-id], proposals
 * li[data-testid=proposal][data-proposal-id], buttons [data-action=edit|pin|forget|save|cancel|accept|
 * correct|accept-changes|reject|expand], stored bidi controls drawn as .bidi-mark, field errors .field-error, relative times [data-ago];
 * <body data-busy="true"> while a change is in flight.
 */

import { renderAddForm, wireAddForm } from "./add-form.js";
import { wireAgents } from "./agents-view.js";
import { captureConsent, wireConsent } from "./consent-view.js";
import { api } from "./api.js";
import { closeForgetAll, confirmForgetAll, exportAll, openForgetAll, wireDialogs } from "./dialogs.js";
import { $, keepingFocus } from "./dom.js";
import { renderEntries, wireEntries } from "./entries-view.js";
import { wireFilter } from "./filter.js";
import { refreshTimes } from "./item.js";
import { wireJournal } from "./journal-view.js";
import { renderWaiting, wireLive } from "./live.js";
import { loadMemory, reportError } from "./memory.js";
import { renderProposals, wireProposals } from "./proposals-view.js";
import { renderBulk, wireBulk } from "./review-bulk.js";
import { completeOidc, oidcSignIn, restoreSession, showApp, showSignIn, signOut, wireSignIn } from "./session.js";
import { clearStatus, say } from "./status.js";
import { changed, handle, limits, on, onAction, onChange, run, signedInAsNow, state, visibleItems } from "./store.js";
import { selectTab, wireTabs } from "./tabs.js";
import { wireUndo } from "./undo.js";

function renderSwitch() {
  const mem = state.memory;
  const sw = $("memory-enabled");
  const failed = !mem && state.loadFailed && Boolean(state.token);
  $("memory-loading").hidden = Boolean(mem) || !state.token || failed;
  $("memory-load-failed").hidden = !failed;
  $("counts").hidden = failed;
  // Until this person's memory has arrived, nothing is shown as theirs: off, unusable, no counts.
  sw.checked = Boolean(mem && mem.enabled);
  sw.disabled = !mem; // usable only once the server's state is on screen
  $("memory-state").textContent = failed ? "Unknown" : mem && mem.enabled ? "On" : "Off";
  document.body.classList.toggle("memory-off", !(mem && mem.enabled));
  const lim = limits();
  $("count-entries").textContent = mem ? `${visibleItems().length} / ${lim.entries} entries` : `– / ${lim.entries} entries`;
  $("count-proposals").textContent = mem ? `${mem.proposals.length} / ${lim.proposals} waiting` : `– / ${lim.proposals} waiting`;
  $("entries-empty-off").hidden = Boolean(mem && mem.enabled);
  $("entries-empty-on").hidden = !(mem && mem.enabled);
}

function render() {
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
  const still = signedInAsNow(); // signed out after the answer (api.js drops one that lands after): say nothing
  await run(async () => {
    try {
      const data = await api("PUT", "v1/memory/settings", { enabled: wanted });
      state.memory.enabled = Boolean(data && data.enabled);
      changed();
      // What GET shows has changed, and so has the server's polling advice (just turned on: an agent
      // may start soon), so ask now rather than at the end of the old, slower wait.
      await loadMemory(true);
      if (!still()) return;
      say(wanted
        ? "Memory is on. Agents you allow can now read it and suggest additions."
        : "Memory is off. Agents get nothing and nothing can be added; your entries are kept and you can still edit or forget them.", "ok");
    } catch (err) {
      if (!still()) return;
      sw.checked = !wanted;
      await reportError(err, "settings");
    }
  });
}

function wire() {
  onChange(render);
  on("filtered", () => keepingFocus(renderEntries)); // the search applies to entries alone
  onAction(clearStatus);
  on("polled", () => refreshTimes());
  handle("signOut", signOut);
  wireSignIn();
  $("signin-oidc-button").addEventListener("click", () => {
    oidcSignIn().catch(() => say("Could not start sign-in in this browser.", "error", "signin"));
  });
  $("signout").addEventListener("click", () => { signOut(true, true); say("Signed out.", "info"); });
  $("memory-enabled").addEventListener("change", setEnabled);
  wireLive();
  wireAddForm();
  wireEntries();
  wireUndo();
  wireFilter();
  wireProposals();
  wireTabs();
  wireBulk({ reload: () => loadMemory(true), report: reportError });
  wireAgents({ reload: () => loadMemory(true), report: reportError, showTab: (name) => selectTab(name, false) });
  wireJournal();
  wireConsent();
  wireDialogs();
  $("forget-all").addEventListener("click", () => { clearStatus(); openForgetAll(); });
  $("forget-all-cancel").addEventListener("click", closeForgetAll);
  $("forget-all-confirm").addEventListener("click", confirmForgetAll);
  $("forget-all-dialog").addEventListener("cancel", (event) => { event.preventDefault(); closeForgetAll(); });
  $("export").addEventListener("click", () => run(exportAll));
  $("memory-retry").addEventListener("click", () => run(() => loadMemory(false)));
}

async function start() {
  captureConsent(); // an app's `?oauth=` request leaves the address bar before anything else
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
