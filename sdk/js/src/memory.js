// What an agent is given: frozen memory items in a frozen array, and the one thing it may do with
// memory, propose. An agent reads memory but never edits it (only the person does), so every
// mutation of an item or of the array throws (ES modules run in strict mode). Printing an item with
// console.log or util.inspect shows its shape and the length of its text, never the text.

export const KINDS = Object.freeze(["preference", "fact", "note"]);

const INSPECT = Symbol.for("nodejs.util.inspect.custom");

function inspectItem() {
  const ref = this.ref === null ? "null" : "<ref>";
  return `MemoryItem { kind: ${JSON.stringify(this.kind)}, pinned: ${this.pinned}, tainted: ${this.tainted}, ref: ${ref}, text: <${this.text.length} chars> }`;
}

/**
 * One frozen item `{text, kind, pinned, tainted, ref}`. `ref` is the server's opaque handle for
 * the entry, valid in this session (or connection conversation) only: pass it as
 * `propose(..., {replaces: item.ref})`. It is null from a service that sends none.
 */
export function memoryItem({ text, kind, pinned, tainted, ref = null }) {
  if (typeof text !== "string" || typeof kind !== "string") throw new TypeError("item text and kind must be strings");
  if (typeof pinned !== "boolean" || typeof tainted !== "boolean") {
    throw new TypeError("item pinned and tainted must be booleans");
  }
  if (ref !== null && typeof ref !== "string") throw new TypeError("item ref must be a string or null");
  const item = { text, kind, pinned, tainted, ref };
  Object.defineProperty(item, INSPECT, { value: inspectItem });
  return Object.freeze(item);
}

/** A frozen array of frozen items. */
export function memoryItems(items = []) {
  return Object.freeze(Array.from(items, (item) => memoryItem(item)));
}

/** Parse a context answer's `items`; errors name the field, never a value. */
export function itemsFromJson(documents) {
  if (!Array.isArray(documents)) throw new TypeError("items is not a list");
  return memoryItems(
    documents.map((document) => {
      if (document === null || typeof document !== "object") throw new TypeError("item is not an object");
      for (const [name, type] of [["text", "string"], ["kind", "string"], ["pinned", "boolean"], ["tainted", "boolean"]]) {
        if (typeof document[name] !== type) throw new TypeError(`item.${name} is missing or not a ${type}`);
      }
      const ref = document.ref ?? null;
      if (ref !== null && typeof ref !== "string") throw new TypeError("item.ref is not a string");
      return { text: document.text, kind: document.kind, pinned: document.pinned, tainted: document.tainted, ref };
    }),
  );
}

/** Checked before anything is sent: the kind, the text's type, and `replaces` (a ref). */
export function checkProposal(text, kind, replaces) {
  if (typeof text !== "string") throw new TypeError("text must be a string");
  if (!KINDS.includes(kind)) throw new RangeError(`kind must be one of ${KINDS.join(", ")}`);
  if (replaces !== undefined && replaces !== null && (typeof replaces !== "string" || replaces === "")) {
    throw new TypeError("replaces must be an item's ref (a non-empty string)");
  }
}

/**
 * `ctx.memory`: the items and `propose`, frozen. `send(text, kind, options)` does the posting
 * (a worker's event, or a connection's suggestion) and resolves to the id to follow it by.
 */
export function agentMemory(items, send) {
  // Sealed afresh even when frozen already: an item that is frozen but not of the shape is refused here.
  return Object.freeze({
    items: memoryItems(items),
    /** Suggest an entry for the person to accept or reject; resolves to the id of the suggestion's event. */
    async propose(text, kind = "note", options = {}) {
      checkProposal(text, kind, options.replaces);
      return send(text, kind, options);
    },
  });
}

// ---- comparing texts as the service does (to skip proposing what the person already keeps) --------

const FILLERS = new Set(["\u115f", "\u1160", "\u3164", "\uffa0"]); // Hangul fillers: blank to the eye
const FORMAT = /^\p{Cf}$/u;
// Python's \s (str.isspace) is JavaScript's \s without U+FEFF (a format character, dropped before) plus
// the information separators and NEL; the braille blank too: blank to the eye.
const SPACE = /[\s\x1c-\x1f\x85\u2800]+/gu;
const CLOSING_STOPS = /[ .,;\u3002]+$/u; // closing stops, ellipses, commas, semicolons

/** Python's str.casefold, character by character (checked against it over every assigned code point). */
function caseFold(ch) {
  const code = ch.codePointAt(0);
  // Cherokee folds to its capitals; the dotless i stays itself (upper-then-lower would make it "i").
  if ((code >= 0x13a0 && code <= 0x13fd) || (code >= 0xab70 && code <= 0xabbf)) return ch.toUpperCase();
  if (ch === "\u0131") return ch;
  const folded = ch.toUpperCase().toLowerCase(); // full folding: "ß" -> "SS" -> "ss", "ς" -> "Σ" -> "σ"
  return folded === "\u00df" ? "ss" : folded; // capital sharp s: "ẞ" -> "ß" here, "ss" in Python
}

/**
 * The text as the service compares it for duplicates, near enough for an agent to skip one: invisible
 * (format) characters dropped, NFKC, case-folded, white-space runs as one space, trimmed, closing full
 * stops, ellipses, commas and semicolons dropped. Python's `comparable`, checked on the shared vectors.
 * The service also unmasks look-alike letters of other scripts; an agent that misses such a disguise is
 * told its proposal was made, and nothing is added.
 */
export function comparable(text) {
  let visible = "";
  for (const ch of text) if (!FORMAT.test(ch)) visible += FILLERS.has(ch) ? " " : ch;
  let folded = "";
  for (const ch of visible.normalize("NFKC")) folded += caseFold(ch);
  folded = folded.normalize("NFKC").replaceAll("i\u0307", "i");
  const spaced = folded.replace(SPACE, " ").trim();
  return spaced.replace(CLOSING_STOPS, "") || spaced;
}

/** Whether an item already says `text` as a person reads it (proposing it would add nothing). */
export function holds(items, text) {
  const wanted = comparable(text);
  return items.some((item) => comparable(item.text) === wanted);
}
