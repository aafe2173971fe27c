/**
 * Text about failures, as people read it and as PostgreSQL can store it. Every
 * error, reason or other text that reaches a statement goes through `storableText`:
 * text and jsonb cannot hold U+0000, jsonb refuses a lone UTF-16 surrogate, and a
 * clip must not cut a surrogate pair in half. One unstorable string must never
 * be able to fail the statement that settles a whole batch.
 */

/** Errors are kept short: enough to diagnose, small enough to list. */
export const MAX_ERROR_CHARS = 4_000;

/** A bad value as an error message shows it: JSON, but NaN and ±Infinity as themselves (JSON writes them null: "got null" for a NaN). */
export const shownValue = (got: unknown): string => (typeof got === "number" && !Number.isFinite(got) ? String(got) : JSON.stringify(got));
const MAX_STACK_CHARS = 16_000;

const REPLACEMENT = "\uFFFD";
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The text with U+0000 and lone surrogates replaced by U+FFFD, clipped to `maxChars` on a whole character. */
export const storableText = (text: string, maxChars = MAX_ERROR_CHARS): string => {
  let s = text.includes("\u0000") ? text.replaceAll("\u0000", REPLACEMENT) : text;
  s = s.replace(LONE_SURROGATE, REPLACEMENT);
  if (s.length <= maxChars) return s;
  let end = Math.max(0, maxChars - 1);
  // Never keep the first half of a pair whose second half is cut off.
  const last = s.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${s.slice(0, end)}…`;
};

/** JSON of any value: circular references, bigints, functions and symbols become readable markers, never a throw. */
export const safeJson = (value: unknown, maxChars = MAX_ERROR_CHARS): string => {
  const seen = new WeakSet<object>();
  let text: string | undefined;
  try {
    text = JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v === "bigint") return `${v}n`;
      if (typeof v === "function") return `[function ${v.name || "anonymous"}]`;
      if (typeof v === "symbol") return v.toString();
      if (typeof v === "object" && v !== null) {
        if (seen.has(v)) return "[circular]";
        seen.add(v);
      }
      return v;
    });
  } catch (error) {
    // A getter or toJSON that throws.
    text = `[unserializable: ${error instanceof Error ? error.message : typeof error}]`;
  }
  return storableText(text ?? String(value), maxChars);
};

const ownString = (value: object, key: string): string | undefined => {
  try {
    const v = (value as Record<string, unknown>)[key];
    return typeof v === "string" ? v : undefined;
  } catch {
    return undefined;
  }
};

/** Inner errors worth reading beside the outer one: an AggregateError's first few, and a cause. */
const MAX_INNER = 5;

const innerText = (e: object, depth: number): string => {
  if (depth >= 3) return "";
  let parts = "";
  const errors = ownValue(e, "errors");
  if (Array.isArray(errors) && errors.length > 0) {
    const shown = errors.slice(0, MAX_INNER).map((inner) => readable(inner, depth + 1));
    parts += ` [${errors.length} errors: ${shown.join("; ")}${errors.length > MAX_INNER ? "; …" : ""}]`;
  }
  const cause = ownValue(e, "cause");
  if (cause !== undefined) parts += ` (cause: ${readable(cause, depth + 1)})`;
  return parts;
};

const ownValue = (value: object, key: string): unknown => {
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
};

const UNREADABLE = "[an error that could not be read]";

/** A message that is not a string (a number, an object) is still worth showing; one that throws when read is said to be unreadable. */
const messageOf = (e: object): string | undefined => {
  let message: unknown;
  try {
    message = (e as Record<string, unknown>).message;
  } catch {
    return UNREADABLE;
  }
  if (message === undefined || typeof message === "string") return message;
  return typeof message === "object" && message !== null ? safeJson(message) : String(message as number | boolean | bigint);
};

const readable = (e: unknown, depth: number): string => {
  try {
    if (e instanceof Error) {
      const name = ownString(e, "name");
      const message = messageOf(e) ?? "";
      return `${name && name !== "Error" ? `${name}: ${message}` : message}${innerText(e, depth)}`;
    }
    if (typeof e === "string") return e;
    if (typeof e === "object" && e !== null) {
      const message = messageOf(e);
      if (message !== undefined) {
        const name = ownString(e, "name");
        return `${name ? `${name}: ${message}` : message}${innerText(e, depth)}`;
      }
      return safeJson(e);
    }
    return String(e);
  } catch {
    // A Proxy whose traps throw, a symbol's description: nothing about it can be read safely.
    return UNREADABLE;
  }
};

/**
 * What a person needs to read about a thrown value: `Name: message` for an
 * Error (no `Error: ` prefix for plain ones), the `message` of an object that
 * has one, otherwise a safe JSON rendering; an AggregateError's inner errors and
 * a cause follow it. Never throws; always storable.
 */
export const errorText = (e: unknown, maxChars = MAX_ERROR_CHARS): string => storableText(readable(e, 0), maxChars);

/** The stack of a thrown Error, storable and clipped; null when there is none. */
export const errorStack = (e: unknown, maxChars = MAX_STACK_CHARS): string | null => {
  let stack: string | undefined;
  try {
    stack = typeof e === "object" && e !== null ? ownString(e, "stack") : undefined;
  } catch {
    // A Proxy whose traps throw.
    stack = undefined;
  }
  return stack === undefined ? null : storableText(stack, maxChars);
};
