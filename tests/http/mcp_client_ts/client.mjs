// The official MCP TypeScript SDK's client over Streamable HTTP: connect with a bearer token, list the
// tools, call each one given on the command line, print every answer as one JSON document on stdout.
// Usage: node client.mjs <url> <token|-> '<json list of [tool, arguments]>'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, callsJson] = process.argv.slice(2);
const headers = token && token !== "-" ? { Authorization: `Bearer ${token}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
const client = new Client({ name: "ts-sdk-test-client", version: "1.0.0" });
const out = {};
try {
  await client.connect(transport);
  out.server = client.getServerVersion();
  out.protocol = transport.protocolVersion ?? null;
  out.sessionId = transport.sessionId ?? null;
  out.tools = (await client.listTools()).tools;
  out.calls = [];
  for (const [name, args] of JSON.parse(callsJson || "[]")) {
    try {
      out.calls.push(await client.callTool({ name, arguments: args }));
    } catch (error) {
      out.calls.push({ thrown: String(error && error.code !== undefined ? error.code : error) });
    }
  }
  await client.close();
} catch (error) {
  out.error = String(error && error.message ? error.message : error);
  out.code = error && error.code !== undefined ? error.code : null;
}
process.stdout.write(JSON.stringify(out));
