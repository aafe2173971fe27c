import { storableText } from "../error-text.js";
import type { LogLevel } from "../log.js";
import type { LogLine } from "../store/tick/history.js";

export type { LogLine, RunHistory } from "../store/tick/history.js";

export const MAX_LOG_LINES = 50;
export const MAX_LOG_BYTES = 16_384;
const MAX_LOG_MSG_CHARS = 2_000;
const MAX_DEPTH = 64;

const utf8 = new TextEncoder();
const byteLength = (text: string) => utf8.encode(text).length;

class Unstorable extends Error {}

/**
 * A copy of `value` that PostgreSQL's jsonb takes and JSON.stringify cannot throw on:
 * strings and keys made storable (no U+0000, no lone surrogate), bigints as strings,
 * what JSON drops (functions, symbols, undefined) dropped, toJSON honoured, a cycle
 * marked. Throws `Unstorable` when a getter or toJSON throws, or nesting is absurd.
 */
const storable = (value: unknown, ancestors: object[] = []): unknown => {
  if (typeof value === "string") return storableText(value, Number.MAX_SAFE_INTEGER);
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (value === null || typeof value === "boolean") return value;
  if (typeof value !== "object") return undefined;
  if (ancestors.includes(value)) return "[circular]";
  if (ancestors.length >= MAX_DEPTH) throw new Unstorable(`nested deeper than ${MAX_DEPTH} levels`);
  try {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") return storable(toJSON.call(value), ancestors);
    const inner = [...ancestors, value];
    if (Array.isArray(value)) return value.map((v) => storable(v, inner) ?? null);
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const v = storable((value as Record<string, unknown>)[key], inner);
      if (v !== undefined) out[storableText(key, Number.MAX_SAFE_INTEGER)] = v;
    }
    return out;
  } catch (error) {
    if (error instanceof Unstorable) throw error;
    throw new Unstorable(error instanceof Error ? error.message : String(error));
  }
};

/** The output as the history records it: storable and at most `maxBytes` of JSON, else left out and marked. */
export const recordOutput = (value: unknown, maxBytes: number): { output?: unknown; outputTruncated: boolean } => {
  if (value === undefined) return { outputTruncated: false };
  let copy: unknown;
  try {
    copy = storable(value);
  } catch {
    return { outputTruncated: true };
  }
  if (copy === undefined) return { outputTruncated: false };
  const text = JSON.stringify(copy);
  // A string of n UTF-16 units is at least n bytes: most outputs skip the encoding.
  if (text.length > maxBytes || (text.length * 3 > maxBytes && byteLength(text) > maxBytes)) return { outputTruncated: true };
  return { output: copy, outputTruncated: false };
};

/**
 * The run's last `ctx.log` lines, within MAX_LOG_LINES and MAX_LOG_BYTES: the oldest go
 * first. Each line is made storable when logged, so the settle statement never meets one
 * it cannot store.
 */
export class LogRing {
  private readonly lines: Array<{ line: LogLine; bytes: number }> = [];
  private bytes = 0;

  push(level: LogLevel, msg: unknown, fields?: Record<string, unknown>): void {
    let kept: Record<string, unknown> | undefined;
    if (fields !== undefined) {
      try {
        const copy = storable(fields);
        kept = typeof copy === "object" && copy !== null && !Array.isArray(copy) ? (copy as Record<string, unknown>) : undefined;
      } catch {
        kept = { unstorableFields: true };
      }
    }
    const line: LogLine = { at: new Date().toISOString(), level, msg: storableText(String(msg), MAX_LOG_MSG_CHARS), ...(kept ? { fields: kept } : {}) };
    const bytes = byteLength(JSON.stringify(line));
    if (bytes > MAX_LOG_BYTES) {
      const { fields: _dropped, ...bare } = line;
      this.add({ ...bare, fields: { fieldsDropped: true } }, byteLength(JSON.stringify(bare)) + 30);
      return;
    }
    this.add(line, bytes);
  }

  private add(line: LogLine, bytes: number): void {
    this.lines.push({ line, bytes });
    this.bytes += bytes;
    while (this.lines.length > MAX_LOG_LINES || (this.bytes > MAX_LOG_BYTES && this.lines.length > 1)) this.bytes -= this.lines.shift()!.bytes;
  }

  get size(): number {
    return this.lines.length;
  }

  toArray(): LogLine[] {
    return this.lines.map((l) => l.line);
  }
}
