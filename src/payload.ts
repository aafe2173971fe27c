import { safeParse } from "zod/v4/core";
import { errorText } from "./error-text.js";
import { JobsError } from "./errors.js";
import type { AnyJob } from "./job.js";
import { jsonTextDeeperThan, MAX_PAYLOAD_DEPTH, valueDeeperThan } from "./json-limits.js";
import { longerThan, MAX_KEY_CHARS } from "./terms.js";

/** Enough issues to fix a value; a value wrong in a million places (a huge array) would otherwise make a message as large. */
const MAX_ISSUES = 100;

type ZodIssueLike = { path: ReadonlyArray<PropertyKey>; message: string; code?: string; errors?: ReadonlyArray<ReadonlyArray<ZodIssueLike>> };

/** How deep in unions within unions the options' issues are told (a recursive schema nests them a hundred deep). */
const UNION_DEPTH = 3;

/**
 * A plain union's issue (no option matched) followed by each option's own, under its path (it said only
 * "Invalid input"), into `out` until it holds `max`; returns how many more there were that it left out.
 */
const withOptions = (issues: ReadonlyArray<ZodIssueLike>, out: ZodIssueLike[], max: number, at: ReadonlyArray<PropertyKey> = [], option = "", depth = 0): number => {
  let more = 0;
  for (const i of issues) {
    if (out.length >= max) {
      more++;
      continue;
    }
    const path = [...at, ...i.path];
    out.push({ path, message: option + plain(i), code: i.code });
    if (i.code === "invalid_union" && Array.isArray(i.errors) && depth < UNION_DEPTH) {
      i.errors.forEach((branch, n) => (more += withOptions(branch, out, max, path, `${option}option ${n + 1}: `, depth + 1)));
    }
  }
  return more;
};

/**
 * zod/mini loads no messages: each issue says only "Invalid input", and an app had to load zod's English
 * locale (about 1 KB gzip in a Worker) for better. Said here from the issue's own fields instead.
 */
const plain = (i: ZodIssueLike): string => {
  const x = i as ZodIssueLike & Record<string, unknown>;
  if (i.message !== "Invalid input") return i.message;
  const bound = (word: string, op: string, n: unknown) =>
    `${word}: expected ${x.origin} ${x.origin === "string" || x.origin === "array" ? "to have" : "to be"} ${op}${x.inclusive === false ? "" : "="}${n}${x.origin === "string" ? " characters" : x.origin === "array" ? " items" : ""}`;
  switch (i.code) {
    case "invalid_type": return `Invalid input: expected ${x.expected}`;
    case "too_small": return bound("Too small", ">", x.minimum);
    case "too_big": return bound("Too big", "<", x.maximum);
    case "invalid_format": return `Invalid ${x.format}`;
    case "invalid_value": return `Invalid option: expected one of ${(x.values as unknown[]).map((v) => JSON.stringify(v)).join("|")}`;
    case "unrecognized_keys": return `Unrecognized key(s): ${(x.keys as string[]).join(", ")}`;
    case "not_multiple_of": return `Invalid number: expected a multiple of ${x.divisor}`;
    default: return i.message;
  }
};

/** Shapes zod's issues into plain JSON for API clients: where, what, which check. */
export const describeIssues = (given: ReadonlyArray<ZodIssueLike>) => {
  const issues: ZodIssueLike[] = [];
  const more = Math.max(0, given.length - MAX_ISSUES) + withOptions(given.slice(0, MAX_ISSUES), issues, MAX_ISSUES);
  const described: Array<{ path: Array<string | number>; message: string; code: string | undefined }> = issues
    .slice(0, MAX_ISSUES)
    .map((i) => ({ path: i.path.map((k) => (typeof k === "symbol" ? String(k) : k)), message: i.message, code: i.code }));
  if (more > 0) described.push({ path: [], message: `and ${more} more issues`, code: "more_issues" });
  return described;
};

/** Text PostgreSQL cannot store: U+0000 (in text or jsonb) or a lone UTF-16 surrogate (not valid Unicode). */
export const unstorable = (text: string): string | undefined =>
  text.includes("\u0000") ? "U+0000 is not allowed in strings" : LONE_SURROGATE.test(text) ? "a lone UTF-16 surrogate is not valid Unicode" : undefined;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A key (idempotency key, correlation id, debounce key) as given: null when absent, else a string of 1 to
 * 255 characters PostgreSQL can store, or `invalid_options` naming `field`.
 */
export const keyText = (value: unknown, field: string, where: Record<string, unknown> = {}): string | null => {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || value.length === 0 || longerThan(value, MAX_KEY_CHARS) || unstorable(value)) {
    // Said as the query filters and the limits' keys say it: "1 to 255 characters" alone read as wrong for "a\u0000b".
    const what = typeof value === "string" && value.length > 0 && !longerThan(value, MAX_KEY_CHARS) ? " without U+0000 or a lone surrogate" : "";
    throw new JobsError("invalid_options", `${field} must be a string of 1 to 255 characters${what}`, { ...where, field });
  }
  return value;
};

/** Finds the first string or key PostgreSQL cannot store, so the error can point at it. */
const findUnstorable = (
  value: unknown,
  path: Array<string | number> = [],
): { path: Array<string | number>; message: string } | undefined => {
  if (typeof value === "string") {
    const message = unstorable(value);
    return message ? { path, message } : undefined;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findUnstorable(value[i], [...path, i]);
      if (hit) return hit;
    }
    return undefined;
  }
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const message = unstorable(k);
      if (message) return { path: [...path, k], message };
      const hit = findUnstorable(v, [...path, k]);
      if (hit) return hit;
    }
  }
  return undefined;
};

/**
 * Where a payload holds a number JSON cannot (NaN, ±Infinity: JSON.stringify writes null for them),
 * found by walking the value as given. Only run when the JSON text holds a null.
 */
const findNonFinite = (value: unknown, path: Array<string | number> = [], seen = new Set<object>()): Array<string | number> | undefined => {
  if (typeof value === "number") return Number.isFinite(value) ? undefined : path;
  if (value === null || typeof value !== "object" || seen.has(value) || typeof (value as { toJSON?: unknown }).toJSON === "function") return undefined;
  seen.add(value);
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  for (const [k, v] of entries) {
    const hit = findNonFinite(v, [...path, k], seen);
    if (hit) return hit;
  }
  return undefined;
};


/**
 * How many characters more the stored payload's text takes than its JSON: jsonb keeps a number as
 * numeric and writes it with all its digits (JSON's 1e+308 as 309 characters), so a payload within
 * the limit could read back 44 times larger. Strings are skipped.
 */
export const exponentGrowth = (text: string): number => {
  if (!/\de[+-]/.test(text)) return 0;
  let grown = 0;
  for (const m of text.matchAll(/"(?:[^"\\]|\\.)*"|(\d+)(?:\.(\d+))?e([+-]\d+)/g)) {
    if (m[1] === undefined) continue;
    const digits = m[1].length + (m[2]?.length ?? 0);
    const point = m[1].length + Number(m[3]);
    grown += Math.max(0, (point >= digits ? point : point > 0 ? digits + 1 : 2 - point + digits) - m[0].length);
  }
  return grown;
};

export type ParseResult =
  | { ok: true; data: unknown }
  /** `thrown`: the schema threw (a transform or refine), which says nothing of the payload itself. */
  | { ok: false; issues: ReturnType<typeof describeIssues>; thrown?: unknown };

/**
 * Parses a payload with a job's schema. zod's safeParse only catches validation
 * failures: a transform or refine that throws (or an async one) escapes it, so
 * that is caught here and reported as an issue instead of crashing a request or a tick.
 */
export const parsePayload = (job: AnyJob, value: unknown): ParseResult => {
  try {
    const parsed = safeParse(job.schema, value);
    return parsed.success ? { ok: true, data: parsed.data } : { ok: false, issues: describeIssues(parsed.error.issues) };
  } catch (error) {
    return { ok: false, issues: [{ path: [], message: `the schema failed: ${errorText(error)}`, code: "schema_error" }], thrown: error };
  }
};

const encoder = new TextEncoder();

/**
 * Checks one payload for a job and returns what will be stored: the payload as
 * it reads back from JSON, which is exactly what the handler will later parse.
 * Throws `unknown_job`, `payload_too_large` or `invalid_payload`.
 */
export const checkPayload = (
  registry: ReadonlyMap<string, AnyJob>,
  name: unknown,
  payload: unknown,
  maxBytes: number,
  where: Record<string, unknown> = {},
): { job: AnyJob; stored: unknown; parsed: unknown } => {
  // A missing or non-string name is a malformed item, not a job nobody defined (it said "no job named undefined").
  if (typeof name !== "string") throw new JobsError("invalid_options", `job must be a job's name (a string), got ${name === undefined ? "none" : name === null ? "null" : Array.isArray(name) ? "an array" : `a ${typeof name}`}`, { ...where, field: "job" });
  const job = registry.get(name);
  if (!job) {
    throw new JobsError("unknown_job", `no job named ${JSON.stringify(name)} is defined`, { ...where, job: name });
  }
  let text: string | undefined;
  try {
    text = JSON.stringify(payload);
  } catch (e) {
    // Thousands of levels overflow JSON.stringify's stack: said as the depth limit says it.
    if (e instanceof RangeError && valueDeeperThan(payload, MAX_PAYLOAD_DEPTH)) {
      throw new JobsError("invalid_payload", `payload for ${job.name} is nested deeper than ${MAX_PAYLOAD_DEPTH} levels`, where);
    }
    // What a getter or toJSON in it threw may be anything, null included.
    const why = e instanceof Error ? errorText(e) : `reading it threw ${errorText(e)}`;
    throw new JobsError("invalid_payload", `payload for ${job.name} is not JSON: ${why}`, where);
  }
  if (text === undefined) throw new JobsError("invalid_payload", `payload for ${job.name} is missing`, where);
  if (text.includes("null")) {
    let at: Array<string | number> | undefined;
    try {
      at = findNonFinite(payload);
    } catch {
      // A getter that throws was already read by JSON.stringify; nothing more to find.
    }
    if (at) {
      const message = "a number JSON cannot hold (NaN or Infinity)";
      throw new JobsError("invalid_payload", `payload for ${job.name} holds ${message}`, { ...where, issues: [{ path: at, message, code: "not_finite" }] });
    }
    if (text === "null") throw new JobsError("invalid_payload", `payload for ${job.name} is null: a payload is a JSON value other than null`, where);
  }
  // UTF-8 takes at most 3 bytes per UTF-16 unit, so short texts need no encoding to be measured.
  const grown = exponentGrowth(text);
  const bytes = text.length * 3 + grown <= maxBytes ? 0 : encoder.encode(text).length + grown;
  if (bytes > maxBytes) {
    const stored = grown > 0 ? " as stored (PostgreSQL writes a number with an exponent in all its digits)" : "";
    throw new JobsError("payload_too_large", `payload for ${job.name} is ${bytes} bytes${stored}; the limit is ${maxBytes}`, {
      ...where,
      bytes,
      limit: maxBytes,
    });
  }
  // Each level takes two characters at least, so a short text cannot be too deep.
  if (text.length > 2 * MAX_PAYLOAD_DEPTH && jsonTextDeeperThan(text, MAX_PAYLOAD_DEPTH)) {
    throw new JobsError("invalid_payload", `payload for ${job.name} is nested deeper than ${MAX_PAYLOAD_DEPTH} levels`, where);
  }
  const stored: unknown = JSON.parse(text);
  // JSON.stringify writes U+0000 and lone surrogates as \u escapes (\u0000, \ud800...), so a
  // text without either escape holds neither, and the walk is skipped.
  const bad = text.includes("\\u0000") || /\\ud[89a-f]/.test(text) ? findUnstorable(stored) : undefined;
  if (bad) {
    throw new JobsError("invalid_payload", `payload for ${job.name} holds text PostgreSQL cannot store: ${bad.message}`, {
      ...where,
      issues: [{ path: bad.path, message: bad.message, code: "unstorable_text" }],
    });
  }
  const parsed = parsePayload(job, stored);
  if (!parsed.ok) {
    throw new JobsError("invalid_payload", `payload for ${job.name} does not match its schema`, { ...where, issues: parsed.issues });
  }
  return { job, stored, parsed: parsed.data };
};
