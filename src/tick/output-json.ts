import { storableText } from "../error-text.js";
import { exponentGrowth } from "../payload.js";

/**
 * A storable copy of a value as JSON.stringify would write it, built in work bounded by a
 * budget of JSON characters: the walk stops as soon as the JSON passes it, so a handler's
 * 100 MB return value costs what its first `maxChars` do.
 */
export type BoundedJson =
  /** `value` is undefined when JSON has nothing for it (a function, a symbol, undefined). */
  | { readonly ok: true; readonly value: unknown; readonly chars: number }
  | { readonly ok: false; readonly why: "too_large" | "unstorable" };

const MAX_DEPTH = 64;

/** Thrown through our own frames only (never through user code) to end the walk; anything else thrown is "unstorable". */
const TOO_LARGE = Symbol("too large");

// Read through the intrinsic getter: an own `length` on the instance cannot lie about the size.
const typedLength = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype) as object, "length")!.get as (this: ArrayBufferView) => number;
const isTypedArray = (v: object): v is ArrayBufferView => ArrayBuffer.isView(v) && !(v instanceof DataView);
// Node's Buffer.prototype.toJSON copies every byte into an array: it is called only when the bytes can fit.
const bufferToJSON = (globalThis as { Buffer?: { prototype: { toJSON?: unknown } } }).Buffer?.prototype.toJSON;

const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;
/** The length of a storable string's JSON (no lone surrogates left to escape). */
const jsonLength = (text: string): number => (NEEDS_ESCAPE.test(text) ? JSON.stringify(text).length : text.length + 2);
const storable = (text: string) => storableText(text, Number.MAX_SAFE_INTEGER);

/**
 * `value` as JSON.stringify would write it (toJSON honoured, what JSON drops dropped), made
 * storable: strings and keys without U+0000 or lone surrogates, bigints as strings, a cycle
 * marked "[circular]". `chars` is the length of its JSON; past `maxChars` the walk stops:
 * too_large. A getter, toJSON or proxy that throws, or nesting past 64 levels: unstorable.
 */
export const boundedJson = (value: unknown, maxChars: number): BoundedJson => {
  let chars = 0;
  const path: object[] = [];
  /** Throws once `n` more characters would pass the budget (a lower bound refuses a value unread). */
  const need = (n: number) => {
    if (chars + n > maxChars) throw TOO_LARGE;
  };
  const spend = (n: number) => (need(n), (chars += n));

  const string = (s: string): string => {
    // Its JSON is at least its length and two quotes: a long one is refused before it is scanned.
    need(s.length + 2);
    const text = storable(s);
    spend(jsonLength(text));
    return text;
  };

  /** What JSON.stringify's SerializeJSONProperty makes of `holder[key]` (already read as `v`). */
  const property = (key: string | number, v: unknown): unknown => {
    if ((typeof v === "object" && v !== null) || typeof v === "function") {
      if (path.includes(v)) return string("[circular]");
      const toJSON = (v as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === "function") {
        // Its JSON is {"type":"Buffer","data":[...]}: at least two characters a byte.
        if (toJSON === bufferToJSON && isTypedArray(v)) need(2 * typedLength.call(v) + 26);
        // Called once, with the key as JSON.stringify does; what it returns is not asked again.
        const result: unknown = toJSON.call(v, String(key));
        return typeof result === "object" && result !== null && path.includes(result) ? string("[circular]") : plain(result);
      }
    }
    return plain(v);
  };

  const plain = (v: unknown): unknown => {
    switch (typeof v) {
      case "string":
        return string(v);
      case "number":
        // Counted as jsonb writes it back: a number with an exponent in all its digits (1e308: 309).
        return Number.isFinite(v) ? (spend(String(v).length + exponentGrowth(String(v))), v) : (spend(4), null);
      case "boolean":
        return spend(v ? 4 : 5), v;
      case "bigint":
        // JSON.stringify throws on a bigint; the history keeps its digits.
        return string(v.toString());
      case "object": {
        if (v === null) return spend(4), null;
        // Boxed primitives are written as their primitive, as JSON.stringify does.
        if (v instanceof Number) return plain(Number(v));
        if (v instanceof String) return plain(String(v));
        if (v instanceof Boolean || v instanceof BigInt) return plain(v.valueOf());
        if (path.length >= MAX_DEPTH) throw new Error("nested too deep");
        path.push(v);
        const out = Array.isArray(v) ? array(v) : object(v);
        path.pop();
        return out;
      }
      default:
        return undefined;
    }
  };

  const array = (a: readonly unknown[]): unknown[] => {
    const length = a.length;
    // Brackets and commas first: an array too long for one character an element is refused unread.
    spend(2 + Math.max(0, length - 1));
    const out: unknown[] = [];
    for (let i = 0; i < length; i++) {
      const v = property(i, a[i]);
      if (v === undefined) spend(4);
      out.push(v === undefined ? null : v);
    }
    return out;
  };

  const object = (o: object): Record<string, unknown> => {
    // A typed array is written as {"0":x,...}: at least six characters an element, refused before its keys are listed.
    if (isTypedArray(o)) need(6 * typedLength.call(o) + 1);
    spend(2);
    const out: Record<string, unknown> = {};
    let comma = 0;
    for (const key of Object.keys(o)) {
      const v = property(key, (o as Record<string, unknown>)[key]);
      if (v === undefined) continue;
      need(key.length + 3);
      const name = storable(key);
      spend(jsonLength(name) + 1 + comma);
      comma = 1;
      // An own "__proto__" key stays a key: assigning it would set the prototype instead.
      if (name === "__proto__") Object.defineProperty(out, name, { value: v, enumerable: true, writable: true, configurable: true });
      else out[name] = v;
    }
    return out;
  };

  try {
    return { ok: true, value: property("", value), chars };
  } catch (error) {
    return { ok: false, why: error === TOO_LARGE ? "too_large" : "unstorable" };
  }
};
