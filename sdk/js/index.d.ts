// Types of personal-memory-sdk (hand-written; `make check` runs `tsc --noEmit` over them and a typed
// example, test/types/example.ts). The package itself is plain ESM JavaScript in src/.

/** The contract's entry kinds. */
export type Kind = "preference" | "fact" | "note";
export declare const KINDS: readonly Kind[];

/** One entry as an agent sees it. Frozen: assigning or deleting a field throws. */
export interface MemoryItem {
  readonly text: string;
  readonly kind: string;
  readonly pinned: boolean;
  /** Proposed in a session that had read untrusted content: weigh it with extra doubt. */
  readonly tainted: boolean;
  /** Opaque handle for this entry, valid in this session (or connection conversation) only; null from a service that sends none. */
  readonly ref: string | null;
}

/** A frozen array of frozen items: push, pop, index assignment all throw. */
export type MemoryItems = readonly MemoryItem[];

export interface ProposeOptions {
  /** An item's `ref`: the suggestion replaces that entry if the person accepts it. */
  replaces?: string | null;
}

export interface SessionProposeOptions extends ProposeOptions {
  messageId?: string | null;
  /** A previous proposal's id, to repeat a post that failed: the server never makes it twice. */
  eventId?: string;
}

/** `ctx.memory`: read-only items and `propose`. Agents never write memory; the person decides. */
export interface AgentMemory {
  readonly items: MemoryItems;
  /** Suggest an entry; resolves to the id of the suggestion's event (follow it with `outcome`). */
  propose(text: string, kind?: Kind, options?: SessionProposeOptions): Promise<string>;
}

export interface AgentContext {
  readonly sessionId: string;
  readonly memory: AgentMemory;
}

export interface ConnectionAgentContext {
  /** The agent the person named when connecting. */
  readonly agent: string;
  /** Suggestions from this connection reach the page flagged as possibly influenced. */
  readonly tainted: boolean;
  readonly memory: AgentMemory;
}

export interface Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
}

/** Static keys, or an async provider of them (e.g. `fromNodeProviderChain()` of @aws-sdk/credential-providers). */
export type CredentialsInput = Credentials | (() => Promise<Credentials>);

export interface RetryOptions {
  /** Attempts in all, at least 1 (default 4). */
  maxAttempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
}
export declare const DEFAULT_RETRY: Readonly<Required<RetryOptions>>;
export declare const DEFAULT_REGION: "us-east-1";

export interface ClientOptions {
  /** SigV4 region (default us-east-1). */
  region?: string;
  /** Per attempt (default 10 000). */
  timeoutMs?: number;
  retry?: RetryOptions;
  /** A fetch of your own (tests, proxies); defaults to the global one. Called with a URL object. */
  fetch?(input: { readonly href: string }, init: object): Promise<FetchResponse>;
  sleep?: (ms: number) => Promise<void>;
}

interface FetchResponse {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  readonly body: AsyncIterable<Uint8Array> | null;
}

export interface Session {
  readonly sessionId: string;
  readonly userId: string | null;
  readonly threadId: string | null;
  readonly agent: string;
  readonly memory: boolean;
  readonly tainted: boolean;
}

export interface RegisterSession {
  /** The person the session serves (a sign-in's `sub`), or null. */
  userId: string | null;
  agent: string;
  /** The agent manifest's `"memory"` flag (its pack.json). */
  memory: boolean;
  threadId?: string | null;
}

export interface Outcome {
  readonly type: "memory.proposed" | "memory.proposal_refused" | (string & {});
  readonly proposalId: string | null;
  /** A refusal's reason code (`memory_off`, `credential:<shape>`, ...), never the text. */
  readonly reason: string | null;
  readonly proposed: boolean;
  readonly refused: boolean;
}

export interface EventRecord {
  readonly id: string;
  readonly type: string;
  readonly status: string;
  readonly handled: boolean;
  readonly kind: string | null;
  readonly messageId: string | null;
  readonly createdAt: string | null;
  readonly outcome: Outcome | null;
}

export interface ProposeEvent {
  /** The worker's own id, fixed before the first attempt: posting it again changes nothing. */
  id: string;
  text: string;
  kind?: Kind;
  messageId?: string | null;
  replaces?: string | null;
}

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

declare abstract class SignedClient {
  constructor(baseUrl: string, credentials: CredentialsInput, options?: ClientOptions);
  /** A client from the local stack's `.local/credentials.json` (this class's role). */
  static fromCredentialsFile<T extends SignedClient>(
    this: new (baseUrl: string, credentials: CredentialsInput, options?: ClientOptions) => T,
    baseUrl: string,
    path: string,
    options?: ClientOptions,
  ): T;
  readonly baseUrl: string;
}

/** Signed as a host role: registers sessions, marks them untrusted, fetches their context. */
export declare class HostClient extends SignedClient {
  static readonly ROLE: "host";
  registerSession(sessionId: string, registration: RegisterSession): Promise<Session>;
  markUntrusted(sessionId: string): Promise<Session>;
  /** Empty unless the manifest asked for memory, the session has a user and that user turned memory on. */
  fetchContext(sessionId: string): Promise<MemoryItems>;
}

/** Signed as a worker role: posts a session's agent events and reads their outcomes. */
export declare class WorkerClient extends SignedClient {
  static readonly ROLE: "worker";
  /** 1..20 events; resolves to how many the server had not seen. Safe to repeat. */
  postEvents(sessionId: string, events: readonly ProposeEvent[]): Promise<number>;
  propose(sessionId: string, text: string, kind?: Kind, options?: SessionProposeOptions): Promise<string>;
  listEvents(sessionId: string): Promise<readonly EventRecord[]>;
  /** null while the event waits for the stream (or is unknown). */
  outcome(sessionId: string, eventId: string): Promise<Outcome | null>;
  waitForOutcome(sessionId: string, eventId: string, options?: WaitOptions): Promise<Outcome | null>;
}

export interface Suggestion {
  readonly eventId: string;
  readonly agent: string;
  readonly tainted: boolean;
}

/** A person's own agent, by the connection token (`pmc_…`) they made on their memory page. */
export declare class ConnectionClient {
  constructor(baseUrl: string, token: string, options?: Omit<ClientOptions, "region">);
  readonly baseUrl: string;
  context(): Promise<{ readonly items: MemoryItems; readonly agent: string; readonly tainted: boolean }>;
  /** Sent once (the id is the service's): a failed post is not retried. */
  propose(text: string, kind?: Kind, options?: ProposeOptions): Promise<Suggestion>;
  outcome(eventId: string): Promise<Outcome | null>;
  waitForOutcome(eventId: string, options?: WaitOptions): Promise<Outcome | null>;
}
export declare const TOKEN_PREFIX: "pmc_";

export declare function loadContext(sessionId: string, host: HostClient, worker: WorkerClient): Promise<AgentContext>;
export declare function loadConnectionContext(connection: ConnectionClient): Promise<ConnectionAgentContext>;

export interface ItemInput {
  text: string;
  kind: string;
  pinned: boolean;
  tainted: boolean;
  ref?: string | null;
}
export declare function memoryItem(item: ItemInput): MemoryItem;
export declare function memoryItems(items?: Iterable<ItemInput>): MemoryItems;
/** `ctx.memory` over items of your own and a `send` that posts (tests, other runtimes). */
export declare function agentMemory(
  items: Iterable<ItemInput>,
  send: (text: string, kind: Kind, options: SessionProposeOptions) => Promise<string>,
): AgentMemory;

/** The text as the service compares it for duplicates (Python's `comparable`; the shared vectors hold both to it). */
export declare function comparable(text: string): string;
/** Whether an item already says `text` as a person reads it (proposing it would add nothing). */
export declare function holds(items: readonly Pick<MemoryItem, "text">[], text: string): boolean;

export declare const MAX_EVENTS_PER_POST: 20;
export declare function newEventId(): string;
export declare function sessionPath(sessionId: string, suffix?: string): string;

export interface LocalCredentials extends Credentials {
  readonly arn?: string;
}
export declare function loadCredentialsFile(path: string, role: "host" | "worker" | "operator"): LocalCredentials;

// ---- the prompt block ----------------------------------------------------------------------------
export declare const MAX_ENTRY_CHARS: 2000;
export declare const NOTE_PREFIX: "| ";
export declare const HEADER: readonly string[];
export interface RenderOptions {
  /** For tests: 16..128 of [A-Za-z0-9_-]; normally leave it out (a random one per call). */
  boundary?: string;
  maxEntryChars?: number;
}
/** The items as a delimited, data-only block for a model prompt (no trailing newline). */
export declare function renderMemoryBlock(
  items: Iterable<Pick<MemoryItem, "text" | "kind" | "pinned" | "tainted">>,
  options?: RenderOptions,
): string;
export declare function escapeText(text: string): string;
export declare function openingDelimiter(boundary: string): string;
export declare function closingDelimiter(boundary: string): string;

// ---- errors: branch on classes and `code`, never on message text ----------------------------------
export declare class MemorySdkError extends Error {}
export declare class CredentialsFileError extends MemorySdkError {}
export declare class TransportError extends MemorySdkError {
  readonly method: string;
  readonly path: string;
  readonly attempts: number;
  readonly reason: string;
}
export declare class ProtocolError extends MemorySdkError {
  readonly method: string;
  readonly path: string;
  readonly problem: string;
}
export type ErrorCode =
  | "invalid_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "memory_off"
  | "limit_reached"
  | "conflict"
  | "duplicate"
  | "credential_refused"
  | "unavailable"
  | "unknown"
  | `http_${number}`
  | (string & {});
/** An error status: `status`, the contract's `code`, and the route. Never the text sent or the server's message. */
export declare class ApiError extends MemorySdkError {
  constructor(status: number, code: string, method: string, path: string);
  readonly status: number;
  readonly code: ErrorCode;
  readonly method: string;
  readonly path: string;
}
export declare class InvalidRequestError extends ApiError {}
export declare class UnauthorizedError extends ApiError {}
export declare class ForbiddenError extends ApiError {}
export declare class NotFoundError extends ApiError {}
export declare class ConflictError extends ApiError {}
export declare class MemoryOffError extends ApiError {}
export declare class LimitReachedError extends ApiError {}
export declare class DuplicateError extends ConflictError {}
export declare class CredentialRefusedError extends ApiError {}
export declare class RateLimitedError extends ApiError {}
export declare class ServerError extends ApiError {}
export declare class UnavailableError extends ServerError {}
