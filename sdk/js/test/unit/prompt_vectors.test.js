// The prompt block (and the duplicate fold) against the cases the Python SDK's tests read too (sdk/vectors/):
// the same items give the same block, byte for byte, so the two SDKs cannot drift.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { NOTE_PREFIX, comparable, holds, renderMemoryBlock } from "../../src/index.js";

const VECTORS = new URL("../../../vectors/memory_block.json", import.meta.url);
const { vectors } = JSON.parse(readFileSync(VECTORS, "utf8"));

const options = (vector) => ({
  boundary: vector.boundary,
  ...(vector.max_entry_chars === undefined ? {} : { maxEntryChars: vector.max_entry_chars }),
});

const entryTexts = (block) =>
  block
    .split("\n")
    .filter((line) => line.startsWith(NOTE_PREFIX + "[") && line.includes(" text="))
    .map((line) => JSON.parse(line.slice(line.indexOf(" text=") + 6)));

test("the vectors file holds the cases of every group", () => {
  const groups = new Set(vectors.map((vector) => vector.name.split(".")[0]));
  for (const group of ["hostile", "hidden", "kind", "provenance", "empty", "bounds", "boundary"]) {
    assert.ok(groups.has(group), group);
  }
});

for (const vector of vectors.filter((vector) => "block" in vector)) {
  test(`vector ${vector.name}: the exact block`, () => {
    assert.equal(renderMemoryBlock(vector.items, options(vector)), vector.block);
  });
}

for (const vector of vectors.filter((vector) => "expect" in vector)) {
  test(`vector ${vector.name}: its properties`, () => {
    const block = renderMemoryBlock(vector.items, options(vector));
    const lines = block.split("\n");
    const boundary = /^<<<MEMORY_NOTES_BEGIN ([0-9A-Za-z_-]+)>>>$/.exec(lines[0])[1];
    assert.notEqual(boundary, vector.expect.boundary_is_not);
    assert.equal(lines.at(-1), `<<<MEMORY_NOTES_END ${boundary}>>>`);
    assert.equal(lines.length, vector.expect.lines);
    assert.deepEqual(entryTexts(block), vector.expect.entry_texts);
  });
}

const COMPARED = JSON.parse(readFileSync(new URL("../../../vectors/comparable.json", import.meta.url), "utf8")).vectors;

test("comparable gives the shared vectors' forms, as Python's does", () => {
  assert.ok(COMPARED.length >= 10);
  assert.deepEqual(COMPARED.map((vector) => comparable(vector.text)), COMPARED.map((vector) => vector.comparable));
});

test("holds: an item already says the text as a person reads it", () => {
  const items = [{ text: "Prefers short, direct answers." }];
  assert.ok(holds(items, "  PREFERS short,  direct ANSWERS"));
  assert.ok(!holds(items, "Prefers long answers"));
});
