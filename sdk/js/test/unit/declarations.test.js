// index.d.ts declares every export the package has, and nothing it lacks (tsc checks the types' use).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import * as sdk from "../../src/index.js";

test("every runtime export is declared in index.d.ts, and every declared value exists", () => {
  const declarations = readFileSync(new URL("../../index.d.ts", import.meta.url), "utf8");
  const declared = [...declarations.matchAll(/^export declare (?:const|function|class) (\w+)/gm)].map((match) => match[1]);
  assert.deepEqual([...declared].sort(), Object.keys(sdk).sort());
});
