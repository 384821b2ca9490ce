// Reads the local stack's credentials file, so hosts and workers can sign without an AWS account.
// `make run` writes `.local/credentials.json` as
// {"host"|"worker"|"operator": {"access_key_id", "secret_access_key", "arn"}}. Errors name the file,
// the role and the field, never a value: these are secrets.

import { readFileSync } from "node:fs";

import { CredentialsFileError } from "./errors.js";

export const ROLES = Object.freeze(["host", "worker", "operator"]);

/** `{accessKeyId, secretAccessKey, sessionToken?, arn?}` for `role` from a local credentials file. */
export function loadCredentialsFile(path, role) {
  if (!ROLES.includes(role)) throw new RangeError(`role must be one of ${ROLES.join(", ")}`);
  let document;
  try {
    document = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    const why = error instanceof SyntaxError ? "is not valid JSON" : `cannot be read (${error.code ?? error.name})`;
    throw new CredentialsFileError(`${path} ${why}`);
  }
  const entry = document !== null && typeof document === "object" ? document[role] : undefined;
  if (entry === null || typeof entry !== "object") throw new CredentialsFileError(`${path} has no "${role}" credentials`);
  for (const name of ["access_key_id", "secret_access_key"]) {
    if (typeof entry[name] !== "string" || entry[name] === "") {
      throw new CredentialsFileError(`${path}: ${role}.${name} is missing or not a string`);
    }
  }
  const credentials = { accessKeyId: entry.access_key_id, secretAccessKey: entry.secret_access_key };
  if (typeof entry.session_token === "string") credentials.sessionToken = entry.session_token;
  if (typeof entry.arn === "string") credentials.arn = entry.arn;
  // console.log(credentials) shows the key id and the role, never the secret or the session token.
  Object.defineProperty(credentials, Symbol.for("nodejs.util.inspect.custom"), {
    value: () => `Credentials { accessKeyId: ${JSON.stringify(credentials.accessKeyId)}, arn: ${JSON.stringify(credentials.arn ?? null)} }`,
  });
  return Object.freeze(credentials);
}
