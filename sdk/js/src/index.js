// Personal memory for JavaScript and TypeScript agents (Node 20+): the same behaviour as the Python
// SDK (sdk/personal_memory_sdk). Types: ../index.d.ts.

export { HostClient, WorkerClient, MAX_EVENTS_PER_POST, newEventId, sessionPath } from "./clients.js";
export { ConnectionClient, TOKEN_PREFIX } from "./connection.js";
export { loadContext, loadConnectionContext } from "./context.js";
export { loadCredentialsFile } from "./credentials.js";
export {
  ApiError,
  ConflictError,
  CredentialRefusedError,
  CredentialsFileError,
  DuplicateError,
  ForbiddenError,
  InvalidRequestError,
  LimitReachedError,
  MemoryOffError,
  MemorySdkError,
  NotFoundError,
  ProtocolError,
  RateLimitedError,
  ServerError,
  TransportError,
  UnauthorizedError,
  UnavailableError,
} from "./errors.js";
export { KINDS, agentMemory, comparable, holds, memoryItem, memoryItems } from "./memory.js";
export { HEADER, MAX_ENTRY_CHARS, NOTE_PREFIX, closingDelimiter, escapeText, openingDelimiter, renderMemoryBlock } from "./prompt.js";
export { DEFAULT_REGION, DEFAULT_RETRY } from "./transport.js";
