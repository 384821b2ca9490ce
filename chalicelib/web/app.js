/*
 * Memory page: lets a person sign in, switch memory on or off, read, add, edit and forget entries,
 * review agents' suggestions, read the journal of who used their memory, and export everything.
 *
 * Safety rules this file keeps: every piece of data is rendered with textContent/createElement
 * (never as HTML); no inline script or style (the CSP forbids both); the bearer token lives in
 * sessionStorage only (never in a URL, never in localStorage); every URL is relative to the page so
 * it works at "/" and under an API Gateway stage prefix such as "/api/".
 *
 * Hooks for browser tests (stable ids and attributes):
 *   Sign-in:   #signin (section), #signin-user, #signin-button (local stack),
 *              #signin-oidc-button (deployed), #account, #account-user, #signout
 *   Status:    #status — aria-live region; data-kind="info|ok|error", data-code="<API error code>"
 *   Tabs:      #tab-memory, #tab-journal, #panel-memory, #panel-journal
 *   Switch:    #memory-enabled (checkbox, role=switch), #memory-state ("On"/"Off")
 *   Counts:    #counts, #count-entries ("37 / 200 entries"), #count-proposals ("3 / 50 waiting")
 *   Add form:  #add-form, #add-text, #add-bytes, #add-kind, #add-pinned, #add-expiry, #add-submit,
 *              #add-off-note (shown while memory is off)
 *   Entries:   #entries (ul); each li: data-testid="entry", data-entry-id, data-pinned,
 *              data-tainted, data-origin; inside: [data-testid=text|kind|pinned|tainted|origin|
 *              source|created|expiry]; buttons [data-action=edit|pin|forget];
 *              in edit mode: [data-testid=edit-text|edit-pinned|edit-expiry],
 *              buttons [data-action=save|cancel]. #entries-empty when there are none.
 *   Proposals: #proposals (ul); each li: data-testid="proposal", data-proposal-id, data-tainted;
 *              same inner testids; buttons [data-action=accept|reject]. #proposals-empty.
 *   Data:      #export, #forget-all, #forget-all-dialog, #forget-all-text (data-entries,
 *              data-proposals), #forget-all-confirm, #forget-all-cancel
 *   Journal:   #journal (ol); each li: data-testid="journal-row", data-journal-action;
 *              #journal-more ("Load more"), #journal-empty
 *   Busy:      <body data-busy="true"> while a change is in flight (one change at a time).
 * The CSP forbids string evaluation, so tests should wait with locators, not string predicates.
 */
"use strict";

(() => {
  const TOKEN_KEY = "memory.token";
  const USER_KEY = "memory.user";
  const PKCE_KEY = "memory.pkce";
  const DEFAULT_LIMITS = { entries: 200, proposals: 50, bytes_per_entry: 2000 };
  const KIND_LABELS = { note: "Note", preference: "Preference", fact: "Fact" };
  const encoder = new TextEncoder();

  const state = {
    config: null,
    token: null,
    user: null,
    memory: null, // {enabled, items, proposals, limits}
    editing: new Map(), // entry id -> draft {text, pinned, expiry, initialExpiry}
    busy: false,
    journalCursor: null,
  };

  const $ = (id) => document.getElementById(id);

  /* ---------- small DOM helpers (text only, never HTML) ---------- */

  function el(tag, options, children) {
    const node = document.createElement(tag);
    const opts = options || {};
    if (opts.className) node.className = opts.className;
    if (opts.text !== undefined && opts.text !== null) node.textContent = String(opts.text);
    if (opts.attrs) {
      for (const [name, value] of Object.entries(opts.attrs)) {
        if (value !== undefined && value !== null && value !== false) node.setAttribute(name, String(value));
      }
    }
    for (const child of children || []) {
      if (child !== null && child !== undefined) node.append(child);
    }
    return node;
  }

  let uid = 0;
  const nextId = (prefix) => `${prefix}-${++uid}`;

  function plural(n, one, many) {
    return `${n} ${n === 1 ? one : many || one + "s"}`;
  }

  function byteLength(text) {
    return encoder.encode(text).length;
  }

  function limits() {
    return (state.memory && state.memory.limits) || DEFAULT_LIMITS;
  }

  function focusNode(node) {
    if (!node) return;
    if (!node.hasAttribute("tabindex") && !/^(BUTTON|INPUT|SELECT|TEXTAREA|A)$/.test(node.tagName)) {
      node.setAttribute("tabindex", "-1");
    }
    node.focus();
  }

  /* ---------- status line (aria-live) ---------- */

  let statusTimer = 0;
  function say(text, kind, code) {
    const status = $("status");
    window.clearTimeout(statusTimer);
    status.dataset.kind = kind || "info";
    status.dataset.code = code || "";
    // The same sentence twice would not be announced again: blank it first, then set it.
    if (status.textContent === text) {
      status.textContent = "";
      statusTimer = window.setTimeout(() => { status.textContent = text; }, 60);
    } else {
      status.textContent = text;
    }
  }

  /* ---------- API ---------- */

  class ApiError extends Error {
    constructor(status, code, message, shape) {
      super(code);
      this.status = status;
      this.code = code;
      this.serverMessage = message;
      this.shape = shape;
    }
  }

  function pageBase() {
    // "/" or "/api/" (a stage prefix): everything the page calls lives under the same base.
    const path = window.location.pathname;
    return path.endsWith("/") ? path : path + "/";
  }

  function apiUrl(path) {
    return new URL(pageBase() + path, window.location.origin).toString();
  }

  async function api(method, path, body) {
    const headers = { Accept: "application/json" };
    if (state.token) headers.Authorization = `Bearer ${state.token}`;
    const init = { method, headers, credentials: "omit", cache: "no-store" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(apiUrl(path), init);
    } catch (_err) {
      throw new ApiError(0, "network", "", null);
    }
    let data = null;
    if (response.status !== 204) {
      const raw = await response.text();
      if (raw) {
        try { data = JSON.parse(raw); } catch (_err) { data = null; }
      }
    }
    if (!response.ok) {
      const ok = data && typeof data === "object";
      throw new ApiError(
        response.status,
        ok && typeof data.code === "string" ? data.code : `http_${response.status}`,
        ok && typeof data.message === "string" ? data.message : "",
        ok && typeof data.shape === "string" ? data.shape : null,
      );
    }
    return data;
  }

  /* ---------- errors in words (never echoing the user's text) ---------- */

  const SHAPES = {
    aws_access_key_id: "an AWS access key ID",
    aws_secret_access_key: "an AWS secret access key",
    aws_access_key_pair: "an AWS access key pair",
    aws_credentials: "AWS credentials",
    github_token: "a GitHub token",
    github_fine_grained_token: "a GitHub fine-grained token",
    gitlab_token: "a GitLab access token",
    gitlab_personal_access_token: "a GitLab access token",
    slack_token: "a Slack token",
    slack_webhook: "a Slack webhook address",
    slack_webhook_url: "a Slack webhook address",
    stripe_key: "a Stripe secret key",
    stripe_secret_key: "a Stripe secret key",
    stripe_restricted_key: "a Stripe restricted key",
    google_api_key: "a Google API key",
    gcp_service_account: "a Google Cloud service-account key",
    gcp_service_account_key: "a Google Cloud service-account key",
    azure_connection_string: "an Azure connection string",
    azure_storage_connection_string: "an Azure storage connection string",
    azure_service_bus_connection_string: "an Azure Service Bus connection string",
    openai_api_key: "an OpenAI API key",
    openai_key: "an OpenAI API key",
    anthropic_api_key: "an Anthropic API key",
    anthropic_key: "an Anthropic API key",
    huggingface_token: "a Hugging Face token",
    hugging_face_token: "a Hugging Face token",
    npm_token: "an npm token",
    pypi_token: "a PyPI upload token",
    private_key: "a private key",
    ssh_private_key: "an SSH private key",
    openssh_private_key: "an SSH private key",
    pgp_private_key: "a PGP private key",
    jwt: "a sign-in token (JWT)",
    database_url: "a database address with a password in it",
    url_with_password: "a web address with a password in it",
    password_in_url: "a web address with a password in it",
    basic_auth_url: "a web address with a password in it",
    password: "a password",
    password_assignment: "a password",
    api_key: "an API key",
    api_key_assignment: "an API key",
    secret_assignment: "a secret",
    client_secret: "a client secret",
    bearer_token: "a bearer token",
    authorization_header: "a bearer token",
  };
  const WORDS = {
    aws: "AWS", api: "API", id: "ID", url: "URL", jwt: "JWT", gcp: "Google Cloud", github: "GitHub",
    gitlab: "GitLab", openai: "OpenAI", npm: "npm", pypi: "PyPI", ssh: "SSH", pgp: "PGP", pem: "PEM",
    oauth: "OAuth", sendgrid: "SendGrid", digitalocean: "DigitalOcean", huggingface: "Hugging Face",
    slack: "Slack", stripe: "Stripe", google: "Google", azure: "Azure", anthropic: "Anthropic",
    twilio: "Twilio", mailgun: "Mailgun", discord: "Discord", telegram: "Telegram", shopify: "Shopify",
    heroku: "Heroku",
  };

  function describeShape(shape) {
    if (!shape) return "a password, key or token";
    const key = String(shape).toLowerCase();
    if (SHAPES[key]) return SHAPES[key];
    const words = key.split(/[_\s:-]+/).filter(Boolean).map((w) => WORDS[w] || w).join(" ");
    if (!words) return "a password, key or token";
    return `${/^[aeiou]/i.test(words) ? "an" : "a"} ${words}`;
  }

  function capitalize(text) {
    return text.charAt(0).toUpperCase() + text.slice(1);
  }

  function describeError(err, action) {
    const lim = limits();
    switch (err.code) {
      case "credential_refused":
        return `This looks like ${describeShape(err.shape)} — it was not saved. Memory never keeps passwords, keys or tokens.`;
      case "limit_reached":
        if (action === "accept" || action === "add") {
          return `Memory is full: ${lim.entries} of ${lim.entries} entries. Forget an entry to make room.`;
        }
        return "A limit was reached, so nothing was changed.";
      case "memory_off":
        return action === "accept"
          ? "Memory is off, so suggestions cannot be accepted. Turn memory on first."
          : "Memory is off, so nothing can be added or changed. Turn memory on first.";
      case "not_found":
        return action === "accept" || action === "reject"
          ? "That suggestion is no longer waiting. The list has been refreshed."
          : "That entry no longer exists — it may have been forgotten or expired. The list has been refreshed.";
      case "conflict":
        return "Something changed at the same time. The page has been refreshed; please try again.";
      case "invalid_request":
        // The contract keeps entry text out of error messages, so the server's sentence is safe to show.
        return err.serverMessage
          ? `That was not accepted: ${err.serverMessage.slice(0, 200)}`
          : "That was not accepted. Check the fields and try again.";
      case "unauthorized":
      case "forbidden":
        return "Your sign-in has expired or was not accepted. Please sign in again.";
      case "network":
        return "Could not reach the service. Check your connection and try again.";
      default:
        return err.status >= 500
          ? `The service had a problem (error ${err.status}). Please try again in a moment.`
          : `That did not work (error ${err.status || "unknown"}). Please try again.`;
    }
  }

  async function reportError(err, action) {
    if (!(err instanceof ApiError)) {
      say("Something went wrong on this page. Please reload it.", "error", "page");
      return;
    }
    if (err.status === 401 || err.status === 403) {
      signOut(false);
      say(describeError(err, action), "error", err.code);
      return;
    }
    say(describeError(err, action), "error", err.code);
    if (err.code === "not_found" || err.code === "conflict") await loadMemory(true);
  }

  /* ---------- sign-in ---------- */

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

  function signOut(redirect) {
    state.token = null;
    state.user = null;
    state.memory = null;
    $("memory-enabled").disabled = true;
    state.editing.clear();
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(USER_KEY);
    const logout = state.config && state.config.logout_url;
    if (redirect && typeof logout === "string" && /^https:\/\//.test(logout)) {
      window.location.assign(logout);
      return;
    }
    showSignIn();
  }

  function showSignIn() {
    $("app").hidden = true;
    $("account").hidden = true;
    $("signin").hidden = false;
    $("signin-loading").hidden = true;
    const oidc = state.config && state.config.sign_in === "oidc";
    $("signin-dev-form").hidden = oidc;
    $("signin-oidc").hidden = !oidc;
  }

  async function showApp() {
    $("signin").hidden = true;
    $("app").hidden = false;
    $("account").hidden = false;
    $("account-user").textContent = state.user || "you";
    selectTab("memory", false);
    await loadMemory(false);
  }

  async function devSignIn(event) {
    event.preventDefault();
    const user = $("signin-user").value.trim();
    if (!user) {
      say("Type a user name to sign in as.", "error", "signin");
      $("signin-user").focus();
      return;
    }
    try {
      const data = await api("POST", "dev/token", { user_id: user });
      if (!data || typeof data.token !== "string") throw new ApiError(500, "bad_token", "", null);
      storeSession(data.token, user);
      say(`Signed in as ${user}.`, "ok");
      await showApp();
      $("memory-enabled").focus();
    } catch (err) {
      say(err instanceof ApiError && err.status && err.status < 500
        ? "Sign-in was refused. Check the user name and try again."
        : "Could not sign in: the service did not answer.", "error", err.code || "signin");
    }
  }

  async function oidcSignIn() {
    const cfg = state.config;
    const verifier = randomString(32);
    const digest = await crypto.subtle.digest("SHA-256", encoder.encode(verifier));
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

  async function completeOidc(params) {
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

  /* ---------- memory: load and render ---------- */

  async function loadMemory(quiet) {
    // A load that started before a change finished must not paint the older state over it.
    const generation = (state.changes = (state.changes || 0));
    try {
      const data = await api("GET", "v1/memory");
      if (generation !== state.changes) return;
      state.memory = {
        enabled: Boolean(data && data.enabled),
        items: Array.isArray(data && data.items) ? data.items : [],
        proposals: Array.isArray(data && data.proposals) ? data.proposals : [],
        limits: Object.assign({}, DEFAULT_LIMITS, (data && data.limits) || {}),
      };
      for (const id of [...state.editing.keys()]) {
        if (!state.memory.items.some((e) => e.id === id)) state.editing.delete(id);
      }
      renderMemory();
    } catch (err) {
      if (quiet) return;
      await reportError(err, "load");
    }
  }

  function formatDate(iso) {
    const date = new Date(iso);
    if (Number.isNaN(date.getTime())) return String(iso);
    return new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" }).format(date);
  }

  function daysUntil(iso) {
    const ms = new Date(iso).getTime() - Date.now();
    return Number.isNaN(ms) ? null : Math.max(1, Math.ceil(ms / 86400000));
  }

  function timeEl(iso, testid) {
    return el("time", { text: formatDate(iso), attrs: { datetime: iso, "data-testid": testid } });
  }

  function hasSource(entry) {
    const src = entry.source || {};
    return Boolean(src.thread_id || src.session_id || src.message_id);
  }

  function sourceText(entry) {
    const src = entry.source || {};
    const parts = [];
    if (src.thread_id) parts.push(`thread ${src.thread_id}`);
    if (src.session_id) parts.push(`session ${src.session_id}`);
    if (src.message_id) parts.push(`message ${src.message_id}`);
    if (parts.length) return capitalize(parts.join(" · "));
    return entry.origin === "agent" ? "Not recorded" : "Added on this page";
  }

  function metaRow(label, value) {
    return [el("dt", { text: label }), el("dd", {}, [value])];
  }

  function taintedWarning() {
    return el("p", { className: "tainted", attrs: { "data-testid": "tainted" } }, [
      el("span", { className: "tainted-icon", text: "⚠", attrs: { "aria-hidden": "true" } }),
      el("strong", { text: "Tainted: " }),
      "it came from a session that read untrusted content (such as a web page or an email). Check it before you rely on it.",
    ]);
  }

  function actionButton(action, label, textId, extraClass) {
    return el("button", {
      className: `button button-small${extraClass ? " " + extraClass : ""}`,
      text: label,
      attrs: { type: "button", "data-action": action, "aria-describedby": textId },
    });
  }

  function itemBody(entry, isProposal, textId) {
    const badges = el("p", { className: "badges" }, [
      el("span", { className: "badge", text: KIND_LABELS[entry.kind] || entry.kind, attrs: { "data-testid": "kind" } }),
      entry.pinned
        ? el("span", { className: "badge badge-pinned", text: "Pinned", attrs: { "data-testid": "pinned" } })
        : null,
    ]);
    const origin = entry.origin === "agent"
      ? (isProposal ? "Suggested by an agent" : "An agent (you accepted it)")
      : "You";
    const expiry = entry.expires_at
      ? el("span", {}, [timeEl(entry.expires_at, "expiry"), ` (in ${plural(daysUntil(entry.expires_at), "day")})`])
      : el("span", { text: "Never — kept until you forget it", attrs: { "data-testid": "expiry" } });
    const meta = el("dl", { className: "meta" }, [
      ...metaRow("From", el("span", { text: origin, attrs: { "data-testid": "origin" } })),
      ...metaRow("Source", el("span", {
        className: hasSource(entry) ? "ids" : "", text: sourceText(entry), attrs: { "data-testid": "source" } })),
      ...metaRow(isProposal ? "Suggested" : "Added", timeEl(entry.created_at, "created")),
      ...(isProposal ? [] : metaRow("Expires", expiry)),
    ]);
    return [
      badges,
      el("p", { className: "item-text", text: entry.text, attrs: { id: textId, "data-testid": "text" } }),
      entry.tainted ? taintedWarning() : null,
      meta,
    ];
  }

  function entryItem(entry) {
    const textId = nextId("text");
    const li = el("li", {
      className: `item${entry.tainted ? " item-tainted" : ""}`,
      attrs: {
        "data-testid": "entry", "data-entry-id": entry.id, "data-pinned": String(Boolean(entry.pinned)),
        "data-tainted": String(Boolean(entry.tainted)), "data-origin": entry.origin,
      },
    });
    const draft = state.editing.get(entry.id);
    if (draft) {
      li.append(el("p", { className: "visually-hidden", text: entry.text, attrs: { id: textId } }));
      if (entry.tainted) li.append(taintedWarning());
      li.append(editForm(entry, draft, textId));
      return li;
    }
    li.append(...itemBody(entry, false, textId).filter(Boolean));
    li.append(el("div", { className: "button-row" }, [
      actionButton("edit", "Edit", textId),
      actionButton("pin", entry.pinned ? "Unpin" : "Pin", textId),
      actionButton("forget", "Forget", textId, "button-danger"),
    ]));
    return li;
  }

  function proposalItem(entry) {
    const textId = nextId("text");
    const li = el("li", {
      className: `item${entry.tainted ? " item-tainted" : ""}`,
      attrs: {
        "data-testid": "proposal", "data-proposal-id": entry.id,
        "data-tainted": String(Boolean(entry.tainted)), "data-origin": entry.origin,
      },
    });
    li.append(...itemBody(entry, true, textId).filter(Boolean));
    li.append(el("div", { className: "button-row" }, [
      actionButton("accept", "Accept", textId, "button-primary"),
      actionButton("reject", "Reject", textId),
    ]));
    return li;
  }

  function byteCounter(node, text) {
    const n = byteLength(text);
    const max = limits().bytes_per_entry;
    node.textContent = n > max ? `${n} / ${max} bytes — too long` : `${n} / ${max} bytes`;
    node.classList.toggle("over", n > max);
  }

  function editForm(entry, draft, textId) {
    const ids = { text: nextId("edit-text"), bytes: nextId("edit-bytes"), pinned: nextId("edit-pinned"),
      expiry: nextId("edit-expiry"), hint: nextId("edit-hint") };
    const textarea = el("textarea", { attrs: { id: ids.text, rows: "3", "data-testid": "edit-text",
      "aria-describedby": ids.bytes, "data-field": "text" } });
    textarea.value = draft.text;
    const bytes = el("span", { className: "bytes", attrs: { id: ids.bytes } });
    byteCounter(bytes, draft.text);
    const pinned = el("input", { attrs: { id: ids.pinned, type: "checkbox", "data-testid": "edit-pinned", "data-field": "pinned" } });
    pinned.checked = draft.pinned;
    const expiry = el("input", { attrs: { id: ids.expiry, type: "number", min: "1", max: "3650", step: "1",
      inputmode: "numeric", "data-testid": "edit-expiry", "data-field": "expiry", "aria-describedby": ids.hint } });
    expiry.value = draft.expiry;
    const hint = entry.expires_at
      ? `Now: expires ${formatDate(entry.expires_at)}. Empty: never expire.`
      : "Now: never expires. Empty: keep until you forget it.";
    return el("form", { className: "edit-form", attrs: { novalidate: "", "aria-label": "Edit entry", "data-entry-id": entry.id } }, [
      el("div", { className: "field" }, [
        el("label", { text: "Text", attrs: { for: ids.text } }), textarea,
        el("p", { className: "field-foot" }, [bytes]),
      ]),
      el("div", { className: "field-row" }, [
        el("div", { className: "field" }, [
          el("label", { text: "Forget after (days)", attrs: { for: ids.expiry } }), expiry,
          el("span", { className: "hint", text: hint, attrs: { id: ids.hint } }),
        ]),
        el("div", { className: "field field-check" }, [pinned, el("label", { text: "Pinned", attrs: { for: ids.pinned } })]),
      ]),
      el("div", { className: "button-row" }, [
        el("button", { className: "button button-primary button-small", text: "Save",
          attrs: { type: "submit", "data-action": "save", "aria-describedby": textId } }),
        el("button", { className: "button button-small", text: "Cancel",
          attrs: { type: "button", "data-action": "cancel", "aria-describedby": textId } }),
      ]),
    ]);
  }

  function renderList(listId, emptyId, entries, build) {
    const list = $(listId);
    list.replaceChildren(...entries.map(build));
    list.hidden = entries.length === 0;
    $(emptyId).hidden = entries.length !== 0;
  }

  function renderMemory() {
    const mem = state.memory;
    if (!mem) return;
    const lim = mem.limits;
    const sw = $("memory-enabled");
    sw.checked = mem.enabled;
    sw.disabled = false; // usable only once the server's state is on screen
    $("memory-state").textContent = mem.enabled ? "On" : "Off";
    document.body.classList.toggle("memory-off", !mem.enabled);
    $("count-entries").textContent = `${mem.items.length} / ${lim.entries} entries`;
    $("count-proposals").textContent = `${mem.proposals.length} / ${lim.proposals} waiting`;
    $("add-off-note").hidden = mem.enabled;
    byteCounter($("add-bytes"), $("add-text").value);
    renderList("proposals", "proposals-empty", mem.proposals, proposalItem);
    renderList("entries", "entries-empty", mem.items, entryItem);
    $("entries-empty-off").hidden = mem.enabled;
    $("entries-empty-on").hidden = !mem.enabled;
  }

  function findItem(listId, attr, id) {
    for (const li of $(listId).children) {
      if (li.getAttribute(attr) === id) return li;
    }
    return null;
  }

  /** After a re-render, put focus back on the same control, or on a neighbour if the item went away. */
  function refocus(listId, attr, id, action, fallbackIndex, headingId) {
    const li = id ? findItem(listId, attr, id) : null;
    const target = li || $(listId).children[Math.min(fallbackIndex, $(listId).children.length - 1)];
    const button = target && (target.querySelector(`[data-action="${action}"]`) || target.querySelector("[data-action]"));
    focusNode(button || $(headingId));
  }

  /* ---------- memory: actions ---------- */

  async function run(task) {
    // One change at a time: a double click must not send the same request twice.
    if (state.busy) return;
    state.busy = true;
    state.changes = (state.changes || 0) + 1;
    document.body.dataset.busy = "true"; // a hook for tests; aria-busy would mute the status line
    try {
      await task();
    } finally {
      state.busy = false;
      delete document.body.dataset.busy;
    }
  }

  function parseDays(raw) {
    const text = String(raw).trim();
    if (text === "") return null;
    const days = Number(text);
    if (!Number.isInteger(days) || days < 1 || days > 3650) return NaN;
    return days;
  }

  function checkText(text) {
    const max = limits().bytes_per_entry;
    if (!text.trim()) return "Write something to remember first.";
    const n = byteLength(text);
    if (n > max) return `This is ${n} bytes; an entry can hold at most ${max}. Shorten it and try again.`;
    return null;
  }

  async function addEntry(event) {
    event.preventDefault();
    const text = $("add-text").value;
    const problem = checkText(text);
    const days = parseDays($("add-expiry").value);
    if (problem || Number.isNaN(days)) {
      say(problem || "“Forget after” must be a whole number of days from 1 to 3650, or empty.", "error", "invalid_request");
      (problem ? $("add-text") : $("add-expiry")).focus();
      return;
    }
    const body = { text, kind: $("add-kind").value, pinned: $("add-pinned").checked };
    if (days !== null) body.expires_in_days = days;
    await run(async () => {
      try {
        await api("POST", "v1/memory", body);
        $("add-form").reset();
        say("Added to memory.", "ok");
        await loadMemory(true);
      } catch (err) {
        await reportError(err, "add");
      }
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
        if (state.memory) state.memory.enabled = Boolean(data && data.enabled);
        say(wanted
          ? "Memory is on. Agents you allow can now read it and suggest additions."
          : "Memory is off. Agents get nothing and nothing can be added; your entries are kept.", "ok");
        renderMemory();
      } catch (err) {
        sw.checked = !wanted;
        await reportError(err, "settings");
      }
    });
  }

  function entryById(id) {
    return state.memory && state.memory.items.find((e) => e.id === id);
  }

  function startEdit(entry) {
    state.editing.set(entry.id, {
      text: entry.text,
      pinned: Boolean(entry.pinned),
      expiry: entry.expires_at ? String(daysUntil(entry.expires_at)) : "",
      initialExpiry: entry.expires_at ? String(daysUntil(entry.expires_at)) : "",
    });
    renderMemory();
    const li = findItem("entries", "data-entry-id", entry.id);
    focusNode(li && li.querySelector("[data-testid=edit-text]"));
  }

  function cancelEdit(id) {
    state.editing.delete(id);
    renderMemory();
    refocus("entries", "data-entry-id", id, "edit", 0, "entries-heading");
  }

  async function saveEdit(entry) {
    const draft = state.editing.get(entry.id);
    if (!draft) return;
    const patch = {};
    if (draft.text !== entry.text) {
      const problem = checkText(draft.text);
      if (problem) { say(problem, "error", "invalid_request"); return; }
      patch.text = draft.text;
    }
    if (draft.pinned !== Boolean(entry.pinned)) patch.pinned = draft.pinned;
    if (draft.expiry.trim() !== draft.initialExpiry) {
      const days = parseDays(draft.expiry);
      if (Number.isNaN(days)) {
        say("“Forget after” must be a whole number of days from 1 to 3650, or empty for never.", "error", "invalid_request");
        return;
      }
      patch.expires_in_days = days; // null removes the expiry
    }
    if (Object.keys(patch).length === 0) {
      say("Nothing changed.", "info");
      cancelEdit(entry.id);
      return;
    }
    try {
      await api("PATCH", `v1/memory/${encodeURIComponent(entry.id)}`, patch);
      state.editing.delete(entry.id);
      say("Saved.", "ok");
      await loadMemory(true);
      refocus("entries", "data-entry-id", entry.id, "edit", 0, "entries-heading");
    } catch (err) {
      await reportError(err, "edit");
    }
  }

  async function togglePin(entry) {
    try {
      await api("PATCH", `v1/memory/${encodeURIComponent(entry.id)}`, { pinned: !entry.pinned });
      say(entry.pinned ? "Unpinned." : "Pinned to the top.", "ok");
      await loadMemory(true);
      refocus("entries", "data-entry-id", entry.id, "pin", 0, "entries-heading");
    } catch (err) {
      await reportError(err, "edit");
    }
  }

  async function forgetOne(entry, index) {
    try {
      await api("DELETE", `v1/memory/${encodeURIComponent(entry.id)}`);
      state.editing.delete(entry.id);
      say("Forgotten.", "ok");
      await loadMemory(true);
      refocus("entries", "data-entry-id", null, "forget", index, "entries-heading");
    } catch (err) {
      await reportError(err, "forget");
    }
  }

  async function decide(id, verdict, index) {
    try {
      await api("POST", `v1/memory/${encodeURIComponent(id)}/${verdict}`);
      say(verdict === "accept"
        ? "Accepted: it is now in your memory."
        : "Rejected: the suggestion was deleted.", "ok");
      await loadMemory(true);
      refocus("proposals", "data-proposal-id", null, verdict, index, "proposals-heading");
    } catch (err) {
      await reportError(err, verdict);
    }
  }

  function onEntriesClick(event) {
    const button = event.target.closest("button[data-action]");
    const li = button && button.closest("li[data-entry-id]");
    if (!li) return;
    const id = li.getAttribute("data-entry-id");
    const entry = entryById(id);
    if (!entry) return;
    const index = [...$("entries").children].indexOf(li);
    const action = button.getAttribute("data-action");
    if (action === "edit") startEdit(entry);
    else if (action === "cancel") cancelEdit(id);
    else if (action === "pin") run(() => togglePin(entry));
    else if (action === "forget") run(() => forgetOne(entry, index));
    // "save" is a submit button: handled by onEntriesSubmit.
  }

  function onEntriesSubmit(event) {
    const form = event.target.closest("form[data-entry-id]");
    if (!form) return;
    event.preventDefault();
    const entry = entryById(form.getAttribute("data-entry-id"));
    if (entry) run(() => saveEdit(entry));
  }

  function onEntriesInput(event) {
    const form = event.target.closest("form[data-entry-id]");
    const draft = form && state.editing.get(form.getAttribute("data-entry-id"));
    if (!draft) return;
    const field = event.target.getAttribute("data-field");
    if (field === "text") {
      draft.text = event.target.value;
      byteCounter(form.querySelector(".bytes"), draft.text);
    } else if (field === "pinned") {
      draft.pinned = event.target.checked;
    } else if (field === "expiry") {
      draft.expiry = event.target.value;
    }
  }

  function onEntriesKeydown(event) {
    if (event.key !== "Escape") return;
    const form = event.target.closest("form[data-entry-id]");
    if (form) {
      event.preventDefault();
      cancelEdit(form.getAttribute("data-entry-id"));
    }
  }

  function onProposalsClick(event) {
    const button = event.target.closest("button[data-action]");
    const li = button && button.closest("li[data-proposal-id]");
    if (!li) return;
    const action = button.getAttribute("data-action");
    const index = [...$("proposals").children].indexOf(li);
    if (action === "accept" || action === "reject") {
      run(() => decide(li.getAttribute("data-proposal-id"), action, index));
    }
  }

  /* ---------- forget everything ---------- */

  async function openForgetAll() {
    await loadMemory(true);
    const mem = state.memory || { items: [], proposals: [] };
    const text = $("forget-all-text");
    text.dataset.entries = String(mem.items.length);
    text.dataset.proposals = String(mem.proposals.length);
    text.textContent = `This will forget ${plural(mem.items.length, "entry", "entries")} and ` +
      `${plural(mem.proposals.length, "suggestion")} waiting for review.`;
    const dialog = $("forget-all-dialog");
    if (typeof dialog.showModal === "function") dialog.showModal();
    else dialog.setAttribute("open", "");
    $("forget-all-cancel").focus();
  }

  function closeForgetAll() {
    const dialog = $("forget-all-dialog");
    if (typeof dialog.close === "function") dialog.close();
    else dialog.removeAttribute("open");
    $("forget-all").focus();
  }

  async function confirmForgetAll() {
    await run(async () => {
      try {
        const data = await api("DELETE", "v1/memory");
        const n = data && typeof data.deleted === "number" ? data.deleted : 0;
        closeForgetAll();
        say(`Forgot everything: ${plural(n, "item")} removed. Memory stays ${state.memory && state.memory.enabled ? "on" : "off"}.`, "ok");
        state.editing.clear();
        await loadMemory(true);
      } catch (err) {
        closeForgetAll();
        await reportError(err, "forget_all");
      }
    });
  }

  /* ---------- export ---------- */

  async function exportAll() {
    try {
      const data = await api("GET", "v1/memory/export");
      const blob = new Blob([JSON.stringify(data, null, 2)], { type: "application/json" });
      const url = URL.createObjectURL(blob);
      const link = el("a", { attrs: { href: url, download: `memory-export-${new Date().toISOString().slice(0, 10)}.json` } });
      link.hidden = true;
      document.body.append(link);
      link.click();
      link.remove();
      // Give the browser time to start the download before the object URL goes away.
      window.setTimeout(() => URL.revokeObjectURL(url), 10000);
      say("Export downloaded.", "ok");
    } catch (err) {
      await reportError(err, "export");
    }
  }

  /* ---------- journal ---------- */

  const REFUSALS = {
    not_requested: "the agent had not asked to use memory",
    no_user: "the session belonged to no one",
    memory_off: "memory was off",
    session_cap: "that conversation had already made 5 suggestions",
    waiting_cap: "50 suggestions were already waiting for you",
    empty: "it was empty",
    too_long: "it was longer than 2000 bytes",
    invalid_kind: "its kind was not preference, fact or note",
    unknown_session: "the session was unknown",
    unreadable: "its sealed text could not be opened for you",
  };
  const OPERATOR_ACTIONS = {
    read: "looked at your memory", get: "looked at your memory", list: "looked at your memory",
    get_memory: "looked at your memory", read_memory: "looked at your memory",
    forget: "forgot one entry", delete: "forgot one entry", forget_one: "forgot one entry",
    delete_entry: "forgot one entry", forget_entry: "forgot one entry",
    forget_all: "forgot everything", delete_all: "forgot everything", delete_memory: "forgot everything",
  };

  /** The operator's own action: the row's "action" key already names the journal action. */
  function operatorAction(row) {
    const nested = (row.detail && row.detail.action) || (row.details && row.details.action);
    const value = row.operator_action || row.access || row.operation || nested || "";
    return String(value);
  }

  function refusalWords(reason) {
    const text = String(reason || "");
    if (text.startsWith("credential:")) return `it looked like ${describeShape(text.slice(11))}`;
    return REFUSALS[text] || `reason: ${text || "not given"}`;
  }

  function journalSentence(row) {
    const session = row.session_id ? ` (session ${row.session_id})` : "";
    switch (row.action) {
      case "keep.memory.context": {
        const agent = row.agent ? `The agent “${row.agent}”` : "An agent";
        const count = Number(row.count) || 0;
        return count
          ? `${agent} was given ${plural(count, "entry", "entries")} from your memory${session}.`
          : `${agent} asked for your memory and was given nothing${session}.`;
      }
      case "keep.memory.operator_access": {
        const done = operatorAction(row);
        let what = OPERATOR_ACTIONS[done.toLowerCase()] || (done ? `did “${done}” on your memory` : "accessed your memory");
        if (row.reason === "not_found") what = "tried to forget an entry that no longer existed";
        const op = row.operator ? ` (${row.operator})` : "";
        const request = row.request_id ? ` Request ${row.request_id}.` : "";
        return `Support staff${op} ${what}.${request}`;
      }
      case "keep.memory.settings":
        return row.enabled ? "Memory was turned on." : "Memory was turned off.";
      case "keep.memory.forget_all":
        return `Everything was forgotten: ${plural(Number(row.entries) || 0, "entry", "entries")} and ` +
          `${plural(Number(row.proposals) || 0, "waiting suggestion")}.`;
      case "keep.memory.proposal_refused":
        return `An agent's suggestion${session} was refused because ${refusalWords(row.reason)}.`;
      case "keep.memory.key_created":
        return "A new encryption key was made for your memory: only it can open what you store from now on.";
      case "keep.memory.key_destroyed":
        return "Your memory's encryption key was destroyed: nothing stored before, backups included, can be read again.";
      default: {
        const details = Object.entries(row)
          .filter(([k]) => k !== "at" && k !== "action")
          .map(([k, v]) => `${k}: ${typeof v === "object" ? JSON.stringify(v) : v}`);
        return `${row.action || "Something happened"}${details.length ? " — " + details.join(", ") : ""}.`;
      }
    }
  }

  /**
   * An operator row carries the operator's own "action" (read/forget/…); if a server flattens it over
   * the row's action name, recognise the row by its operator field and restore both.
   */
  function normalizeRow(row) {
    const name = String(row.action || "");
    if (row.operator && !name.startsWith("keep.memory.")) {
      return Object.assign({}, row, { action: "keep.memory.operator_access", operator_action: name });
    }
    return row;
  }

  function journalRow(raw) {
    const row = normalizeRow(raw);
    return el("li", { className: "journal-row", attrs: { "data-testid": "journal-row", "data-journal-action": row.action } }, [
      row.at ? timeEl(row.at, "journal-at") : null,
      el("p", { text: journalSentence(row) }),
    ]);
  }

  let journalSeq = 0;
  async function loadJournal(reset) {
    const list = $("journal");
    const seq = ++journalSeq;
    if (reset) {
      state.journalCursor = null;
      list.replaceChildren();
    }
    const query = state.journalCursor ? `?cursor=${encodeURIComponent(state.journalCursor)}` : "";
    try {
      const data = await api("GET", `v1/memory/journal${query}`);
      if (seq !== journalSeq) return []; // a newer load (tab reopened) superseded this one
      const rows = (data && Array.isArray(data.items) ? data.items : []).map(journalRow);
      list.append(...rows);
      state.journalCursor = data && typeof data.next_cursor === "string" && data.next_cursor ? data.next_cursor : null;
      $("journal-more").hidden = !state.journalCursor;
      $("journal-empty").hidden = list.children.length !== 0;
      return rows;
    } catch (err) {
      await reportError(err, "journal");
      return [];
    }
  }

  async function loadMoreJournal() {
    const rows = await loadJournal(false);
    // The button may now be hidden: carry on reading from the first new row.
    if (rows.length) focusNode(rows[0]);
  }

  /* ---------- tabs ---------- */

  function selectTab(name, focus) {
    for (const tab of ["memory", "journal"]) {
      const selected = tab === name;
      const button = $(`tab-${tab}`);
      button.setAttribute("aria-selected", String(selected));
      button.tabIndex = selected ? 0 : -1;
      $(`panel-${tab}`).hidden = !selected;
    }
    if (focus) $(`tab-${name}`).focus();
    if (name === "journal" && state.token) loadJournal(true);
  }

  function onTabKeydown(event) {
    const order = ["memory", "journal"];
    const current = order.indexOf(event.target.id.replace("tab-", ""));
    let next = null;
    if (event.key === "ArrowRight") next = (current + 1) % order.length;
    else if (event.key === "ArrowLeft") next = (current - 1 + order.length) % order.length;
    else if (event.key === "Home") next = 0;
    else if (event.key === "End") next = order.length - 1;
    if (next === null) return;
    event.preventDefault();
    selectTab(order[next], true);
  }

  /* ---------- start ---------- */

  function wire() {
    $("signin-dev-form").addEventListener("submit", devSignIn);
    $("signin-oidc-button").addEventListener("click", () => {
      oidcSignIn().catch(() => say("Could not start sign-in in this browser.", "error", "signin"));
    });
    $("signout").addEventListener("click", () => { signOut(true); say("Signed out.", "info"); });
    $("memory-enabled").addEventListener("change", setEnabled);
    $("add-form").addEventListener("submit", addEntry);
    $("add-text").addEventListener("input", () => byteCounter($("add-bytes"), $("add-text").value));
    $("add-form").addEventListener("reset", () => {
      window.setTimeout(() => byteCounter($("add-bytes"), $("add-text").value), 0);
    });
    const entries = $("entries");
    entries.addEventListener("click", onEntriesClick);
    entries.addEventListener("submit", onEntriesSubmit);
    entries.addEventListener("input", onEntriesInput);
    entries.addEventListener("change", onEntriesInput);
    entries.addEventListener("keydown", onEntriesKeydown);
    $("proposals").addEventListener("click", onProposalsClick);
    $("forget-all").addEventListener("click", () => { openForgetAll(); });
    $("forget-all-cancel").addEventListener("click", closeForgetAll);
    $("forget-all-confirm").addEventListener("click", confirmForgetAll);
    $("forget-all-dialog").addEventListener("cancel", (event) => { event.preventDefault(); closeForgetAll(); });
    $("export").addEventListener("click", () => run(exportAll));
    $("journal-more").addEventListener("click", () => run(loadMoreJournal));
    for (const tab of ["memory", "journal"]) {
      $(`tab-${tab}`).addEventListener("click", () => selectTab(tab, false));
      $(`tab-${tab}`).addEventListener("keydown", onTabKeydown);
    }
  }

  async function start() {
    wire();
    state.token = sessionStorage.getItem(TOKEN_KEY);
    state.user = sessionStorage.getItem(USER_KEY);
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

  document.addEventListener("DOMContentLoaded", () => { start(); });
})();
