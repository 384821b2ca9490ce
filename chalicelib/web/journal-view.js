/* The Journal tab: who used the user's memory and what changed, in sentences (never entry text). */

import { api } from "./api.js";
import { $, el, focusNode, plural, timeEl, withMarks } from "./dom.js";
import { reportError } from "./memory.js";
import { on, run, state } from "./store.js";
import { describeShape } from "./words.js";

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
  invalid_text: "it held control characters",
  agent_blocked: "you stopped that agent suggesting", agent_forgotten: "you had forgotten what that agent wrote",
  duplicate: "the same text is already in your memory or waiting",
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
  return String(row.operator_action || row.access || row.operation || nested || "");
}

/**
 * Support staff in words: "Support staff (role personal-memory-support)". The role (or user) name is the
 * part of the ARN a person can read; the ARN itself goes in the row's disclosure.
 */
export function operatorName(arn) {
  const text = String(arn || "");
  const found = /^arn:[\w-]+:(?:iam|sts)::\d*:(role|assumed-role|user)\/(.+)$/.exec(text);
  if (!found) return "Support staff";
  const parts = found[2].split("/").filter(Boolean);
  // role/path/Name → Name; assumed-role/Name/session → Name; user/path/name → name
  const name = found[1] === "assumed-role" ? parts[0] : parts[parts.length - 1];
  if (!name) return "Support staff";
  return `Support staff (${found[1] === "user" ? "user" : "role"} ${name})`;
}

function refusalWords(reason) {
  const text = String(reason || "");
  if (text.startsWith("credential:")) return `it looked like ${describeShape(text.slice(11))}`;
  return REFUSALS[text] || `reason: ${text || "not given"}`;
}

/** "14:02" today, or "2 Dec 2026, 14:02" another day: when a forget happened, when it is final. */
function moment(iso) {
  const when = new Date(iso);
  if (Number.isNaN(when.getTime())) return String(iso);
  const time = when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
  return when.toDateString() === new Date().toDateString()
    ? time : `${when.toLocaleDateString([], { day: "numeric", month: "short", year: "numeric" })}, ${time}`;
}

/** A forget's receipt (issue 26): after `unrecoverable_by` no copy of what went opens anywhere, backups included. */
function receipt(row) {
  return row.unrecoverable_by ? ` · unrecoverable everywhere by ${moment(row.unrecoverable_by)}` : "";
}

function journalSentence(row) {
  const session = row.session_id ? ` (session ${row.session_id})` : "";
  switch (row.action) {
    case "keep.memory.context": {
      const agent = row.agent ? `The agent “${row.agent}”` : "An agent";
      const count = Number(row.count) || 0;
      if (row.reason === "agent_blocked") return `${agent} asked for your memory and was given nothing: you stopped it reading${session}.`;
      return count
        ? `${agent} was given ${plural(count, "entry", "entries")} from your memory${session}.`
        : `${agent} asked for your memory and was given nothing${session}.`;
    }
    case "keep.memory.operator_access": {
      const done = operatorAction(row);
      let what = OPERATOR_ACTIONS[done.toLowerCase()] || (done ? `did “${done}” on your memory` : "accessed your memory");
      if (row.reason === "not_found") what = "tried to forget an entry that no longer existed";
      return `${operatorName(row.operator)} ${what}.`;
    }
    case "keep.memory.settings":
      return row.enabled ? "Memory was turned on." : "Memory was turned off.";
    case "keep.memory.forget":
      return `One entry forgotten at ${moment(row.at)}${receipt(row)}: no copy of it, backups included, can be read after that.`;
    case "keep.memory.forget_all":
      return `Everything was forgotten: ${plural(Number(row.entries) || 0, "entry", "entries")} and ` +
        `${plural(Number(row.proposals) || 0, "waiting suggestion")}${receipt(row)}.`;
    case "keep.memory.proposal_refused":
      const agent = row.agent ? `A suggestion from “${row.agent}”` : "An agent's suggestion";
      return `${agent}${session} was refused because ${refusalWords(row.reason)}.`;
    case "keep.memory.agent_settings": {
      const said = [];
      if (typeof row.read === "boolean") said.push(row.read ? "may read your memory" : "may not read your memory");
      if (typeof row.propose === "boolean") said.push(row.propose ? "may suggest entries" : "may not suggest entries");
      return `You decided that the agent “${row.agent}” ${said.join(" and ") || "keeps its settings"}.`;
    }
    case "keep.memory.forget_agent": {
      const from = row.session_id ? `one conversation (session ${row.session_id}) of the agent “${row.agent}”` : `the agent “${row.agent}”`;
      return `Everything from ${from} was forgotten: ${plural(Number(row.entries) || 0, "entry", "entries")} and ` +
        `${plural(Number(row.proposals) || 0, "waiting suggestion")}${receipt(row)}.`;
    }
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

/** What a row's sentence leaves out, for whoever needs it: the operator's ARN and request id. */
function rowDetails(row) {
  if (row.action !== "keep.memory.operator_access") return null;
  const pairs = [["Role ARN", row.operator], ["Request", row.request_id]].filter(([, value]) => value);
  if (!pairs.length) return null;
  return el("details", { className: "ids-details" }, [
    el("summary", { text: "Details" }),
    el("dl", { className: "ids" }, pairs.flatMap(([label, value]) => [el("dt", { text: label }), el("dd", { text: withMarks(value) })])),
  ]);
}

function journalRow(raw) {
  const row = normalizeRow(raw);
  // A row about an agent links to it on the Agents tab (agents-view.js follows the link).
  const agent = typeof row.agent === "string" && row.agent ? row.agent : null;
  const li = el("li", { className: "journal-row", attrs: { "data-testid": "journal-row", "data-journal-action": row.action } }, [
    row.at ? timeEl(row.at, "journal-at") : null,
    el("p", { text: withMarks(journalSentence(row)), attrs: { "data-testid": "journal-text" } }),
    rowDetails(row),
    agent ? el("a", { className: "journal-agent", text: `What “${withMarks(agent)}” may do`,
      attrs: { href: "#panel-agents", "data-agent-link": agent } }) : null,
  ]);
  li.dataset.key = JSON.stringify(raw); // rows have no id: a refresh knows the rows it already shows by their content
  return li;
}

function journalShown() {
  return Boolean(state.token) && !$("panel-journal").hidden;
}

let journalSeq = 0;
let loadingSeq = 0; // the load (a tab opened, "Load more") whose answer is still awaited; 0: none
let refreshing = null; // the refresh awaited (one at a time: an older answer landing last would undo a newer one)
async function fetchPage(cursor) {
  const query = cursor ? `?cursor=${encodeURIComponent(cursor)}` : "";
  const data = await api("GET", `v1/memory/journal${query}`);
  return {
    rows: data && Array.isArray(data.items) ? data.items : [],
    next: data && typeof data.next_cursor === "string" && data.next_cursor ? data.next_cursor : null,
  };
}

function showFooter() {
  $("journal-more").hidden = !state.journalCursor;
  $("journal-empty").hidden = $("journal").children.length !== 0;
}

export async function loadJournal(reset) {
  const list = $("journal");
  const seq = (loadingSeq = ++journalSeq);
  if (reset) {
    state.journalCursor = null;
    list.replaceChildren();
  }
  try {
    const page = await fetchPage(state.journalCursor);
    if (seq !== journalSeq || !state.token) return []; // a newer load (tab reopened, signed out) superseded this one
    const rows = page.rows.map(journalRow);
    list.append(...rows);
    state.journalCursor = page.next;
    showFooter();
    return rows;
  } catch (err) {
    if (seq === journalSeq) await reportError(err, "journal"); // a superseded load's failure is old news
    return [];
  } finally {
    if (loadingSeq === seq) loadingSeq = 0; // a refresh may run again
  }
}

/**
 * While the journal is shown, each poll puts the rows written since on top (nothing moves under the
 * reader's focus, pages already loaded stay). More new rows than a page: the list starts again. Not
 * while a load is awaited (both would draw the same rows); a load started meanwhile drops its answer.
 */
async function refreshJournal() {
  if (!journalShown() || state.busy || loadingSeq || refreshing) return;
  const seq = journalSeq;
  const mine = (refreshing = {});
  const page = await fetchPage(null).catch(() => null).finally(() => { if (refreshing === mine) refreshing = null; });
  if (!page || seq !== journalSeq || !journalShown()) return; // failed (the next poll tries again) or superseded
  const list = $("journal");
  const newest = list.firstElementChild && list.firstElementChild.dataset.key;
  const seen = page.rows.findIndex((row) => JSON.stringify(row) === newest);
  if (seen === -1 && newest !== undefined) {
    list.replaceChildren(...page.rows.map(journalRow));
    state.journalCursor = page.next;
  } else {
    list.prepend(...page.rows.slice(0, seen === -1 ? page.rows.length : seen).map(journalRow));
    if (newest === undefined) state.journalCursor = page.next;
  }
  showFooter();
}

export async function loadMoreJournal() {
  const rows = await loadJournal(false);
  // The button may now be hidden: carry on reading from the first new row.
  if (rows.length) focusNode(rows[0]);
}

function clearJournal() {
  journalSeq += 1;
  loadingSeq = 0; // a load or refresh still awaited is the previous person's: its answer is dropped (journalSeq)
  refreshing = null;
  $("journal").replaceChildren();
  $("journal-more").hidden = true;
  $("journal-empty").hidden = true;
}

export function wireJournal() {
  on("tab", (name) => { if (name === "journal" && state.token) loadJournal(true); });
  on("polled", refreshJournal);
  on("signed-out", clearJournal);
  $("journal-more").addEventListener("click", () => run(loadMoreJournal));
}
