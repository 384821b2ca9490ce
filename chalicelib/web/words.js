/* Everything the page says in words: errors, credential shapes, where an entry came from and when. */

import { plural, quoted, withMarks } from "./dom.js";
import { limits, state } from "./store.js";

export const KIND_LABELS = { note: "Note", preference: "Preference", fact: "Fact" };

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

export function describeShape(shape) {
  if (!shape) return "a password, key or token";
  const key = String(shape).toLowerCase();
  if (SHAPES[key]) return SHAPES[key];
  const words = key.split(/[_\s:-]+/).filter(Boolean).map((w) => WORDS[w] || w).join(" ");
  if (!words) return "a password, key or token";
  return `${/^[aeiou]/i.test(words) ? "an" : "a"} ${words}`;
}

export function capitalize(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function describeError(err, action) {
  const lim = limits();
  switch (err.code) {
    case "credential_refused":
      return `This looks like ${describeShape(err.shape)} — it was not saved. Memory never keeps passwords, keys or tokens.`;
    case "limit_reached":
      if (action === "accept" || action === "add") {
        return `Memory is full: ${lim.entries} of ${lim.entries} entries. Forget an entry to make room.`;
      }
      return "A limit was reached, so nothing was changed.";
    case "duplicate": {
      // The server names the entry, never its text; the page has that entry's text already.
      const existing = state.memory && state.memory.items.find((e) => e.id === err.existingId);
      const which = existing ? quoted(existing.text) : "an entry";
      return action === "accept"
        ? `You already keep this, as ${which}. The suggestion is still waiting: reject it, or accept it in other words.`
        : `You already keep this, as ${which}. Nothing was added.`;
    }
    case "memory_off":
      return action === "accept"
        ? "Memory is off, so suggestions cannot be accepted. Turn memory on first."
        : "Memory is off, so nothing can be added. Turn memory on first.";
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
    case "unavailable":
      if (err.deleted !== null && err.deleted !== undefined) {
        // Forget-all destroys the key first: nothing left can be read, but some of it is still stored.
        return `Your memory can no longer be read, but the service got busy before deleting all of it (${err.deleted} deleted so far). Press “Forget everything” again to delete the rest.`;
      }
      return "The service is busy, so nothing was changed. Please try again in a moment.";
    default:
      return err.status >= 500
        ? `The service had a problem (error ${err.status}). Please try again in a moment.`
        : `That did not work (error ${err.status || "unknown"}). Please try again.`;
  }
}

/** "3 minutes ago", "yesterday", "on 4 Mar 2026" — for the moment something was suggested or added. */
export function ago(iso, now = Date.now()) {
  const then = new Date(iso).getTime();
  if (Number.isNaN(then)) return "";
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  const words = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
  if (seconds < 45) return "just now";
  if (seconds < 3600) return words.format(-Math.round(seconds / 60), "minute");
  if (seconds < 86400) return words.format(-Math.round(seconds / 3600), "hour");
  if (seconds < 86400 * 30) return words.format(-Math.round(seconds / 86400), "day");
  return `on ${new Intl.DateTimeFormat(undefined, { dateStyle: "medium" }).format(new Date(then))}`;
}

/*
 * Agent names are the agents' own choice, so one may read as the page's words ("You", "Memory", "Support-staff"):
 * "Suggested by You" would say the person wrote it. Such a name is marked as an agent's: agent “You”.
 */
const PAGE_WORDS = new Set(["you", "me", "myself", "yourself", "i", "memory", "journal", "agents", "agent", "an agent",
  "support", "staff", "support staff", "operator", "operators", "admin", "administrator", "system", "page", "nobody",
  "no one", "someone", "everyone", "user", "owner"]);

export function readsAsPageWords(name) {
  return PAGE_WORDS.has(String(name).normalize("NFKC").toLowerCase().replace(/[-_.:]+/g, " ").replace(/\s+/g, " ").trim());
}

/** An agent's name where the page names it: as it is, or marked as an agent's when it reads as the page's words. */
/** Names come from storage, so a control stored in one is shown as a mark (dom.js), as in texts. */
export const agentLabel = (name) => (readsAsPageWords(name) ? `agent “${withMarks(name)}”` : withMarks(name));

/** An agent's name quoted inside a sentence: “helper”, or agent “You”. */
export const agentQuoted = (name) => (readsAsPageWords(name) ? `agent “${withMarks(name)}”` : `“${withMarks(name)}”`);

export function agentName(entry) {
  return typeof entry.agent === "string" && entry.agent ? agentLabel(entry.agent) : "an agent";
}

/** Where it came from, in words, before the moment: "From memory-agent, in a conversation, " (null: the user's own). */
export function sourcePrefix(entry) {
  if (entry.origin !== "agent") return null;
  const src = entry.source || {};
  const where = src.thread_id ? "in a conversation" : src.session_id ? "in an agent session" : "somewhere not recorded";
  return `From ${agentName(entry)}, ${where}, `;
}

/** The raw ids behind the words, for whoever needs them (kept out of the way, in a disclosure). */
export function sourceIds(entry) {
  const src = entry.source || {};
  return [["Conversation", src.thread_id], ["Session", src.session_id], ["Message", src.message_id]]
    .filter(([, value]) => value).map(([label, value]) => [label, withMarks(value)]);
}

export function originWords(entry, isProposal) {
  if (entry.origin !== "agent") return "You";
  if (isProposal) return `Suggested by ${agentName(entry)}`;
  return `Suggested by ${agentName(entry)}, ${entry.edited ? "accepted and edited" : "accepted"} by you`;
}

/** Suggestions a bulk decision found decided elsewhere meanwhile, in words ("" when none). */
export function goneWords(result) {
  if (!result.gone) return "";
  const one = result.gone === 1;
  return ` ${plural(result.gone, "suggestion")} ${one ? "was" : "were"} no longer waiting (decided or forgotten in another tab or on another device), so nothing was done to ${one ? "it" : "them"} here.`;
}
