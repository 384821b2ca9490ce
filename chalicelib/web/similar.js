/* Which entries a suggestion is like: close wording, computed in the page from the texts it already has (no request).

   Both texts become sets of content words: Unicode NFKC, invisible characters dropped, lower case, split
   at anything that is not a letter or a digit, common function words left out ("the", "now", "has"...),
   and a light stem ("prefers" and "prefer", "called" and "call" meet). Two texts are similar when their
   sets' Jaccard index (shared words / all words) is at least 1/3: "Prefers coffee" and "Now prefers tea"
   are ({prefer} of {prefer, coffee, tea}); "Prefers coffee" and "Prefers metric units" are not (1 of 4). A
   product's i-/e- compound meets its base word ("iPhone" and "phone"). Measured on updates a person keeps
   (tests/browser/test_update_pairs.py, docs/review.md): it sees 6 of 10; agents say the rest (`replaces`). The
   closest entry, when no other is as close, is shown as "Looks like an update of" (likely-update.js).
   Imports only the store, to forget the texts it holds when the person signs out. */

import { on } from "./store.js";

export const MAX_SIMILAR = 3;

// Words that say little about what a note is about (English; other languages keep all their words).
const STOP = new Set(("a an the and or but nor of to in on at for with by from as into onto over under about " +
  "is are was were be been being am has have had do does did not no yes now then than so too very really also " +
  "just still again always usually often sometimes never that this these those it its i me my mine he him his " +
  "she her hers they them their we us our you your there here what which who whom when where why how " +
  "user user's person person's").split(" "));

function stem(word) {
  if (word.endsWith("'s") || word.endsWith("\u2019s")) word = word.slice(0, -2);
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 5 && word.endsWith("ing")) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith("ed")) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/** The content words of a text, as a set. */
export function contentWords(text) {
  const plain = String(text).normalize("NFKC").replace(/[\p{Cf}\u115f\u1160\u3164\uffa0]/gu, "").toLowerCase();
  const words = plain.split(/[^\p{L}\p{N}'\u2019]+/u).map((w) => w.replace(/^['\u2019]+|['\u2019]+$/g, ""));
  return new Set(words.filter((w) => w && !STOP.has(w)).map(stem).filter((w) => w && !STOP.has(w)));
}

// Each text's words are worked out once, not once per pair: 50 suggestions x 200 entries of 2000 bytes
// would otherwise normalize 40,000 texts at every render. Room for a full inbox and a full memory.
const known = new Map();
const KNOWN_MAX = 512;
// The texts are the person's: on a shared computer the next one to sign in must find none of them in the tab.
on("signed-out", () => known.clear());

/** How many texts' words are held (a test reads it: 0 after sign-out). */
export const heldTexts = () => known.size;

function wordsOf(text) {
  const key = String(text);
  let held = known.get(key);
  if (!held) {
    const words = contentWords(key);
    const compounds = [...words].filter((word) => base(word) && !words.has(base(word)));
    held = { words, compounds };
    if (known.size >= KNOWN_MAX) known.delete(known.keys().next().value);
    known.set(key, held);
  }
  return held;
}

// A product's i-/e- prefix before a word of 4 letters or more ("iPhone" and "phone", "eBook" and "book"): the
// one compound the Jaccard index cannot see that says the same thing (issue 39: "Uses an Android phone" and
// "Uses an iPhone now"). Only these two one-letter heads: "bread" must not meet "read".
function base(word) {
  return word.length >= 5 && (word[0] === "i" || word[0] === "e") ? word.slice(1) : "";
}

function overlap(a, b) {
  const left = wordsOf(a);
  const right = wordsOf(b);
  let shared = 0;
  for (const word of left.words) if (right.words.has(word)) shared += 1;
  // A compound in one text whose base word stands alone in the other (and not in its own text) counts as shared.
  for (const [one, other] of [[left, right], [right, left]]) {
    for (const word of one.compounds) if (!other.words.has(word) && other.words.has(base(word))) shared += 1;
  }
  return { shared, all: left.words.size + right.words.size - shared };
}

const close = ({ shared, all }) => shared > 0 && shared * 3 >= all; // Jaccard >= 1/3, in whole numbers

/** Jaccard index of two texts' content words (0 when either has none). */
export function likeness(a, b) {
  const { shared, all } = overlap(a, b);
  return all ? shared / all : 0;
}

/** Whether two texts are close enough in wording to show one beside the other. */
export function isSimilar(a, b) {
  return close(overlap(a, b));
}

/** The entries most like `text` (at most MAX_SIMILAR), most alike first, ties in the order given. */
export function similarEntries(text, entries) {
  return entries
    .map((entry, index) => {
      const counted = overlap(text, entry.text);
      return { entry, index, score: counted.all ? counted.shared / counted.all : 0, near: close(counted) };
    })
    .filter((scored) => scored.near)
    .sort((x, y) => y.score - x.score || x.index - y.index)
    .slice(0, MAX_SIMILAR)
    .map((scored) => scored.entry);
}
