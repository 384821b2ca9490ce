// The official MCP TypeScript SDK's OAuth client over Streamable HTTP, driven step by step from
// tests/browser/test_oauth_connect.py through stdin/stdout (one JSON document per line):
//   out {"authorize": url}          the SDK sends the person to sign in (the test approves in Chromium)
//   in  <callback URL>              where the browser was sent back (code and state)
//   out {"tools", "context", ...}   after finishAuth: tools listed and called with the access token
//   in  "refresh"  → out {"refreshed", "rotated", ...}  a refresh (rotation) and a call with the new token
//   in  "again"    → out {"outcome", "status", ...}     the next call, after the test revoked on the page
// Usage: node oauth_client.mjs <mcp url> <redirect url> <dcr | metadata document url>
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const [url, redirect, registration] = process.argv.slice(2);
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const next = async () => (await lines.next()).value;
const say = (value) => process.stdout.write(JSON.stringify(value) + "\n");
// A client id that is a metadata document's URL: the SDK uses it itself when it is https (its own rule:
// `clientMetadataUrl`, sent when the server's metadata says `client_id_metadata_document_supported`); an http one
// (the local stack's loopback) the test hands over as the client's known information instead.
const ownDocument = registration.startsWith("https://") ? registration : undefined;
const fixedInformation = registration === "dcr" || ownDocument ? undefined : { client_id: registration };

class Provider {
  constructor() { this.info = fixedInformation; this.saved = undefined; this.verifier = ""; this.redirects = 0; }
  get redirectUrl() { return redirect; }
  get clientMetadataUrl() { return ownDocument; }
  get clientMetadata() {
    return { client_name: "TS SDK test client", redirect_uris: [redirect], grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  clientInformation() { return this.info; }
  saveClientInformation(info) { this.info = info; }
  tokens() { return this.saved; }
  saveTokens(tokens) { this.saved = tokens; }
  redirectToAuthorization(authorizationUrl) { this.redirects += 1; say({ authorize: authorizationUrl.toString() }); }
  saveCodeVerifier(verifier) { this.verifier = verifier; }
  codeVerifier() { return this.verifier; }
  invalidateCredentials(scope) {
    if (scope === "all" || scope === "tokens") this.saved = undefined;
    if (scope === "all") this.info = fixedInformation;
  }
}

const text = (result) => (result.content || []).map((part) => part.text || "").join("\n");
const provider = new Provider();
const connect = async () => {
  const client = new Client({ name: "ts-sdk-oauth-client", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
  return client;
};
try {
  let first = null;
  try { await connect(); } catch (error) { if (!(error instanceof UnauthorizedError)) throw error; first = "unauthorized"; }
  const callback = new URL(await next());
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await transport.finishAuth(callback.searchParams.get("code"));
  const client = await connect();
  const before = provider.tokens();
  const tools = (await client.listTools()).tools.map((tool) => tool.name);
  const context = text(await client.callTool({ name: "memory_context", arguments: {} }));
  const proposed = text(await client.callTool({ name: "memory_propose", arguments: { text: "Likes green tea", kind: "preference" } }));
  say({ first, tools, context, proposed, client_id: provider.clientInformation().client_id, expires_in: before.expires_in,
    access_length: before.access_token.length, refresh_length: before.refresh_token.length });
  await next();
  const refreshed = await auth(provider, { serverUrl: new URL(url) });
  const after = provider.tokens();
  const again = text(await client.callTool({ name: "memory_context", arguments: {} }));
  say({ refreshed, rotated: after.refresh_token !== before.refresh_token, renewed: after.access_token !== before.access_token, again });
  await next();
  let outcome = "answered";
  try { await client.listTools(); } catch (error) { outcome = error instanceof UnauthorizedError ? "unauthorized" : String(error); }
  const raw = await fetch(url, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    headers: { Authorization: `Bearer ${after.access_token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" } });
  say({ outcome, status: raw.status, redirects: provider.redirects });
} catch (error) {
  say({ error: String(error && error.message ? error.message : error) });
}
process.exit(0);
