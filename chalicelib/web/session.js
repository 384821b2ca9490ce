/* Signing in (the local dev form or OIDC with PKCE) and out; the token lives in sessionStorage only. */

import { ApiError, api } from "./api.js";
import { $ } from "./dom.js";
import { loadMemory } from "./memory.js";
import { clearFieldError, fieldError, say } from "./status.js";
import { changed, emit, notBusy, state } from "./store.js";

export const TOKEN_KEY = "memory.token";
const USER_KEY = "memory.user";
const PKCE_KEY = "memory.pkce";
let signIns = 0; // the latest sign-in asked for: an older one answered late is dropped
// Every tab of the page in this browser hears a sign-out (each keeps its own token in sessionStorage, so
// without this a second tab stayed signed in and kept asking for the memory of someone who had left).
const TABS = "memory.session";
let tabs = null;

export function restoreSession() {
  state.token = sessionStorage.getItem(TOKEN_KEY);
  state.user = sessionStorage.getItem(USER_KEY);
}

function b64url(bytes) {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function randomString(size) {
  return b64url(crypto.getRandomValues(new Uint8Array(size)));
}

function nameFromJwt(token) {
  try {
    const part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const claims = JSON.parse(atob(part + "===".slice((part.length + 3) % 4)));
    return String(claims.email || claims["cognito:username"] || claims.preferred_username || claims.sub || "");
  } catch (_err) {
    return "";
  }
}

function storeSession(token, user) {
  state.token = token;
  state.user = user;
  sessionStorage.setItem(TOKEN_KEY, token);
  sessionStorage.setItem(USER_KEY, user);
}

/**
 * Sign out: every trace of this person goes before anything else is drawn. Listeners of "signing-out"
 * still see the token (undo.js sends a pending forget with it); then the state is emptied, listeners
 * of "signed-out" clear what they drew outside the store (the journal, the forms), and one "changed"
 * renders every view empty, all in this one task, so no frame shows one person's data under another's name.
 */
export function signOut(redirect, everywhere = false) {
  if (everywhere && tabs) tabs.postMessage({ type: "signed-out" });
  emit("signing-out");
  Object.assign(state, { token: null, user: null, memory: null, agents: null, etag: null, poll: null, journalCursor: null,
    loadFailed: false });
  state.filter = { text: "", kind: "", origin: "", tainted: false };
  state.proposalFilter = { tainted: false };
  state.correcting.clear();
  state.editing.clear();
  state.expanded.clear();
  state.details.clear();
  state.changes += 1; // a load still in flight for this person is dropped when it lands
  notBusy(); // a change still in flight is this person's: it draws nothing when it lands (api.js)
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(USER_KEY);
  $("account-user").textContent = "";
  $("signin-user").value = "";
  emit("signed-out");
  changed();
  const logout = state.config && state.config.logout_url;
  if (redirect && typeof logout === "string" && /^https:\/\//.test(logout)) {
    window.location.assign(logout);
    return;
  }
  showSignIn();
}

export function showSignIn() {
  $("app").hidden = true;
  $("account").hidden = true;
  $("signin").hidden = false;
  $("signin-loading").hidden = true;
  const oidc = state.config && state.config.sign_in === "oidc";
  $("signin-dev-form").hidden = oidc;
  $("signin-oidc").hidden = !oidc;
}

export async function showApp() {
  $("signin").hidden = true;
  $("app").hidden = false;
  $("account").hidden = false;
  $("account-user").textContent = state.user || "you";
  emit("signed-in"); // tabs.js shows the Memory tab; live.js starts asking
  await loadMemory(false);
}

async function devSignIn(event) {
  event.preventDefault();
  const user = $("signin-user").value.trim();
  const field = [$("signin-user"), $("signin-user-error")];
  clearFieldError(...field);
  if (!user) {
    const problem = "Type a user name to sign in as.";
    fieldError(...field, problem, "signin");
    say(problem, "error", "signin");
    return;
  }
  const attempt = ++signIns;
  try {
    const data = await api("POST", "dev/token", { user_id: user });
    if (attempt !== signIns) return; // signed in as someone else meanwhile
    if (!data || typeof data.token !== "string") throw new ApiError(500, "bad_token", "", null);
    storeSession(data.token, user);
    say(`Signed in as ${user}.`, "ok");
    await showApp();
    $("memory-enabled").focus();
  } catch (err) {
    if (attempt !== signIns) return;
    if (err instanceof ApiError && err.status && err.status < 500) {
      const problem = "Sign-in was refused. Check the user name and try again.";
      fieldError(...field, problem, err.code);
      say(problem, "error", err.code);
    } else say("Could not sign in: the service did not answer.", "error", err.code || "signin");
  }
}

/** Another tab signed out: this one follows at once (it sends nothing more under the old token). */
function onOtherTab(event) {
  if (!(event.data && event.data.type === "signed-out") || !state.token) return;
  signOut(false);
  say("Signed out in another tab.", "info");
}

export function wireSignIn() {
  if (typeof BroadcastChannel === "function") {
    tabs = new BroadcastChannel(TABS);
    tabs.addEventListener("message", onOtherTab);
  }
  $("signin-dev-form").addEventListener("submit", devSignIn);
  $("signin-user").addEventListener("input", () => clearFieldError($("signin-user"), $("signin-user-error")));
}

export async function oidcSignIn() {
  const cfg = state.config;
  const verifier = randomString(32);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  const stateParam = randomString(16);
  sessionStorage.setItem(PKCE_KEY, JSON.stringify({ state: stateParam, verifier }));
  const url = new URL(cfg.authorize_url);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", cfg.client_id);
  url.searchParams.set("redirect_uri", cfg.redirect_uri);
  url.searchParams.set("scope", cfg.scope || "openid");
  url.searchParams.set("state", stateParam);
  url.searchParams.set("code_challenge", b64url(new Uint8Array(digest)));
  url.searchParams.set("code_challenge_method", "S256");
  window.location.assign(url.toString());
}

export async function completeOidc(params) {
  // Take the code out of the address bar (and history) before doing anything with it.
  window.history.replaceState(null, "", window.location.pathname);
  const saved = JSON.parse(sessionStorage.getItem(PKCE_KEY) || "null");
  sessionStorage.removeItem(PKCE_KEY);
  if (params.get("error")) {
    say("Sign-in was cancelled or refused.", "error", "signin");
    return false;
  }
  if (!saved || saved.state !== params.get("state")) {
    say("That sign-in link is stale or was not started here. Please sign in again.", "error", "signin");
    return false;
  }
  const cfg = state.config;
  const form = new URLSearchParams({
    grant_type: "authorization_code",
    code: params.get("code") || "",
    redirect_uri: cfg.redirect_uri,
    client_id: cfg.client_id,
    code_verifier: saved.verifier,
  });
  try {
    const response = await fetch(cfg.token_url, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
      body: form.toString(),
      credentials: "omit",
      cache: "no-store",
    });
    const data = await response.json();
    // The API's authorizer checks the audience, which Cognito puts in the ID token.
    const token = data[cfg.bearer === "access_token" ? "access_token" : "id_token"] || data.access_token;
    if (!response.ok || typeof token !== "string") throw new Error("no token");
    storeSession(token, nameFromJwt(token));
    return true;
  } catch (_err) {
    say("Sign-in could not be completed. Please try again.", "error", "signin");
    return false;
  }
}
