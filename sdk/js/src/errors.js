// One error hierarchy, so callers branch on classes and codes, never on message text.
//
// Privacy rule: an error carries the HTTP status, the contract's error code and the route that was
// called, and nothing from the request body or the server's free-text message. Memory text can
// therefore never reach a log through an SDK error, even if a misbehaving server echoed it.

// A code we are willing to repeat: the contract's codes are short snake_case words; anything else
// (a hostile or broken server) is replaced so it cannot smuggle text into our messages.
const CODE_SHAPE = /^[a-z][a-z0-9_]{0,63}$/;

export class MemorySdkError extends Error {
  get name() {
    return this.constructor.name;
  }
}

/** The local credentials file is missing, unreadable or not the launcher's shape (never shows a key). */
export class CredentialsFileError extends MemorySdkError {}

/** The server could not be reached (or kept failing) after every retry. */
export class TransportError extends MemorySdkError {
  constructor(method, path, attempts, reason) {
    super(`${method} ${path} failed after ${attempts} attempt(s): ${reason}`);
    Object.assign(this, { method, path, attempts, reason });
  }
}

/** A success answer not in the contract's shape (names the field, never its value). */
export class ProtocolError extends MemorySdkError {
  constructor(method, path, problem) {
    super(`${method} ${path}: unexpected response: ${problem}`);
    Object.assign(this, { method, path, problem });
  }
}

/** The server answered with an error status; `status` and `code` say which. */
export class ApiError extends MemorySdkError {
  constructor(status, code, method, path) {
    const safe = typeof code === "string" && CODE_SHAPE.test(code) ? code : "unknown";
    super(`${method} ${path} -> ${status} ${safe}`);
    Object.assign(this, { status, code: safe, method, path });
  }
}

export class InvalidRequestError extends ApiError {} // 400 invalid_request
export class UnauthorizedError extends ApiError {} // 401 unauthorized (a revoked or mistyped connection token)
export class ForbiddenError extends ApiError {} // 403 forbidden (a refused signature, or a role's wrong route)
export class NotFoundError extends ApiError {} // 404 not_found (another's id is the same 404)
export class ConflictError extends ApiError {} // 409 conflict (a session registered again differently)
export class MemoryOffError extends ApiError {} // 409 memory_off
export class LimitReachedError extends ApiError {} // 409 limit_reached
export class DuplicateError extends ConflictError {} // 409 duplicate
export class CredentialRefusedError extends ApiError {} // 422 credential_refused
export class RateLimitedError extends ApiError {} // 429, still throttled after every retry
export class ServerError extends ApiError {} // 5xx, still failing after every retry
export class UnavailableError extends ServerError {} // 503 unavailable (AWS kept refusing)

const BY_CODE = {
  invalid_request: InvalidRequestError,
  unauthorized: UnauthorizedError,
  forbidden: ForbiddenError,
  not_found: NotFoundError,
  conflict: ConflictError,
  memory_off: MemoryOffError,
  limit_reached: LimitReachedError,
  duplicate: DuplicateError,
  credential_refused: CredentialRefusedError,
  unavailable: UnavailableError,
};

// Used when the body carried no usable code (a gateway error page, an empty body).
const BY_STATUS = {
  400: InvalidRequestError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  422: CredentialRefusedError,
  429: RateLimitedError,
};

/** The typed error for an error answer: by the contract's code first, then by status. */
export function errorFor(status, code, method, path) {
  let Class = Object.hasOwn(BY_CODE, code ?? "") ? BY_CODE[code] : undefined;
  if (Class === undefined) Class = status >= 500 ? ServerError : (BY_STATUS[status] ?? ApiError);
  return new Class(status, code ?? `http_${status}`, method, path);
}
