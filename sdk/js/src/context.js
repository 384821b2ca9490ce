// What an agent's `run(ctx)` receives, in either mode: `ctx.memory.items` (frozen) and
// `ctx.memory.propose(text, kind, {replaces})`. The agent's code is the same whether a trusted
// runtime (host + worker roles) or a person's own connection token serves it.

import { agentMemory } from "./memory.js";

/** A session's context: the host fetches the items, proposals go out as the worker's events. */
export async function loadContext(sessionId, host, worker) {
  const items = await host.fetchContext(sessionId);
  const memory = agentMemory(items, (text, kind, { messageId, eventId, replaces } = {}) =>
    worker.propose(sessionId, text, kind, { messageId, eventId, replaces }),
  );
  return Object.freeze({ sessionId, memory });
}

/** A connection's context: the items the person shares with this agent, proposals as suggestions. */
export async function loadConnectionContext(connection) {
  const { items, agent, tainted } = await connection.context();
  const memory = agentMemory(items, async (text, kind, { replaces } = {}) => {
    const suggestion = await connection.propose(text, kind, { replaces });
    return suggestion.eventId;
  });
  return Object.freeze({ agent, tainted, memory });
}
