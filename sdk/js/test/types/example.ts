// A typed agent, checked by `tsc --noEmit` in `make check`: the declarations must describe the SDK as
// an agent uses it, and must refuse what the SDK refuses (the @ts-expect-error lines).
import {
  ApiError,
  ConnectionClient,
  HostClient,
  MemoryOffError,
  WorkerClient,
  loadConnectionContext,
  loadContext,
  renderMemoryBlock,
  type AgentContext,
  type Kind,
  type MemoryItem,
  type Outcome,
} from "personal-memory-sdk";

export async function run(ctx: AgentContext, systemPrompt: string): Promise<string> {
  const prompt = `${systemPrompt}\n\n${renderMemoryBlock(ctx.memory.items)}`;
  const first: MemoryItem | undefined = ctx.memory.items[0];
  // @ts-expect-error items are read-only
  ctx.memory.items.push({ text: "x", kind: "note", pinned: false, tainted: false, ref: null });
  if (first) {
    // @ts-expect-error an item's fields are read-only
    first.text = "rewritten";
    const kind: Kind = "preference";
    await ctx.memory.propose("Prefers green tea", kind, { replaces: first.ref });
  }
  // @ts-expect-error only the contract's kinds
  await ctx.memory.propose("x", "instruction");
  return prompt;
}

export async function asRuntime(baseUrl: string, credentialsFile: string): Promise<Outcome | null> {
  const host: HostClient = HostClient.fromCredentialsFile(baseUrl, credentialsFile);
  const worker: WorkerClient = WorkerClient.fromCredentialsFile(baseUrl, credentialsFile, { retry: { maxAttempts: 2 } });
  await host.registerSession("sess-1", { userId: "alice", agent: "memory-agent-js", memory: true });
  const ctx = await loadContext("sess-1", host, worker);
  try {
    const eventId = await ctx.memory.propose("Prefers metric units", "preference", { messageId: "m-1" });
    return await worker.waitForOutcome("sess-1", eventId, { timeoutMs: 10_000 });
  } catch (error) {
    if (error instanceof MemoryOffError) return null;
    if (error instanceof ApiError && error.code === "forbidden") throw new Error(`refused: ${error.status}`);
    throw error;
  }
}

export async function asConnection(baseUrl: string, token: string): Promise<string> {
  const ctx = await loadConnectionContext(new ConnectionClient(baseUrl, token));
  const eventId = await ctx.memory.propose(`Connected as ${ctx.agent}`);
  return eventId;
}
