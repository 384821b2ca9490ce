// ctx.memory without a server: frozen items, text never printed, proposals checked before posting.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { inspect } from "node:util";

import { CredentialsFileError, agentMemory, loadCredentialsFile, memoryItems } from "../../src/index.js";

const ITEMS = [{ text: "Prefers tea", kind: "preference", pinned: true, tainted: false, ref: "r1" }];

test("items are a frozen array of frozen items; a plain list is sealed; inspect shows no text", () => {
  const memory = agentMemory(ITEMS, async () => "id");
  assert.ok(Object.isFrozen(memory.items) && Object.isFrozen(memory.items[0]));
  assert.throws(() => { memory.items[0].text = "x"; }, TypeError);
  assert.throws(() => { memory.items.length = 0; }, TypeError);
  assert.equal(ITEMS[0].text, "Prefers tea");
  assert.equal(JSON.stringify(memory.items[0]), JSON.stringify(ITEMS[0]));
  assert.ok(!inspect(memory.items).includes("Prefers tea"));
  assert.ok(inspect(memory.items).includes("11 chars"));
  assert.throws(() => memoryItems([{ text: "x", kind: "note", pinned: "yes", tainted: false }]), TypeError);
});

test("propose checks the kind, the text and replaces before anything is sent, and passes replaces on", async () => {
  const sent = [];
  const memory = agentMemory(ITEMS, async (...args) => { sent.push(args); return "event-1"; });
  await assert.rejects(memory.propose("x", "rule"), RangeError);
  await assert.rejects(memory.propose(undefined), TypeError);
  await assert.rejects(memory.propose("x", "note", { replaces: 7 }), TypeError);
  assert.deepEqual(sent, []);
  assert.equal(await memory.propose("Prefers green tea", "preference", { replaces: memory.items[0].ref }), "event-1");
  assert.deepEqual(sent, [["Prefers green tea", "preference", { replaces: "r1" }]]);
  assert.equal(await memory.propose("A note"), "event-1");
  assert.equal(sent[1][1], "note");
});

test("the credentials file: a role's keys; errors name the file, role and field, never a secret", () => {
  const dir = mkdtempSync(join(tmpdir(), "pm-js-"));
  const file = join(dir, "credentials.json");
  writeFileSync(file, JSON.stringify({ host: { access_key_id: "AKIDHOST", secret_access_key: "s3cr3t-value", arn: "arn:aws:iam::0:role/h" }, worker: { access_key_id: "AKIDW" } }));
  const keys = loadCredentialsFile(file, "host");
  assert.deepEqual([keys.accessKeyId, keys.secretAccessKey, keys.arn], ["AKIDHOST", "s3cr3t-value", "arn:aws:iam::0:role/h"]);
  assert.ok(!inspect(keys).includes("s3cr3t-value"));
  const missing = (() => { try { loadCredentialsFile(file, "worker"); } catch (error) { return error; } })();
  assert.ok(missing instanceof CredentialsFileError);
  assert.match(missing.message, /worker\.secret_access_key/);
  assert.throws(() => loadCredentialsFile(file, "operator"), CredentialsFileError);
  assert.throws(() => loadCredentialsFile(join(dir, "absent.json"), "host"), CredentialsFileError);
  assert.throws(() => loadCredentialsFile(file, "admin"), RangeError);
});

test("items frozen elsewhere are still checked: a frozen item of the wrong shape is refused", () => {
  const frozen = Object.freeze([Object.freeze({ text: "x", kind: "note", pinned: 1, tainted: false, ref: null })]);
  assert.throws(() => agentMemory(frozen, async () => "id"), TypeError);
});
