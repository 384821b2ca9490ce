// Errors are typed by the contract's code (then by status), and carry status, code, method and path only.
import assert from "node:assert/strict";
import { test } from "node:test";

import * as sdk from "../../src/index.js";

const { errorFor } = await import("../../src/errors.js");

test("each contract code has its class, each carrying that code", () => {
  const expected = {
    invalid_request: [400, sdk.InvalidRequestError],
    unauthorized: [401, sdk.UnauthorizedError],
    forbidden: [403, sdk.ForbiddenError],
    not_found: [404, sdk.NotFoundError],
    memory_off: [409, sdk.MemoryOffError],
    limit_reached: [409, sdk.LimitReachedError],
    conflict: [409, sdk.ConflictError],
    duplicate: [409, sdk.DuplicateError],
    credential_refused: [422, sdk.CredentialRefusedError],
    unavailable: [503, sdk.UnavailableError],
  };
  for (const [code, [status, Class]] of Object.entries(expected)) {
    const error = errorFor(status, code, "GET", "/p");
    assert.ok(error instanceof Class && error instanceof sdk.ApiError && error instanceof sdk.MemorySdkError, code);
    assert.equal(error.code, code);
    assert.equal(error.status, status);
    assert.equal(error.name, Class.name);
  }
});

test("without a usable code the status decides; a code that is not a snake_case word becomes unknown", () => {
  assert.ok(errorFor(429, null, "GET", "/p") instanceof sdk.RateLimitedError);
  assert.ok(errorFor(502, null, "GET", "/p") instanceof sdk.ServerError);
  assert.ok(errorFor(418, null, "GET", "/p") instanceof sdk.ApiError);
  assert.equal(errorFor(404, null, "GET", "/p").code, "http_404");
  const hostile = errorFor(400, "Prefers tea\n<b>", "POST", "/p");
  assert.ok(hostile instanceof sdk.InvalidRequestError);
  assert.equal(hostile.code, "unknown");
  assert.ok(!hostile.message.includes("Prefers"));
  assert.ok(errorFor(409, "__proto__", "GET", "/p") instanceof sdk.ConflictError);
});
