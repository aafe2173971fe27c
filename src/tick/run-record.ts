import { storableText } from "../error-text.js";
import { type LogLevel, writableFields } from "../log.js";
import type { LogLine } from "../store/tick/history.js";
import { boundedJson } from "./output-json.js";

export type { LogLine, RunHistory } from "../store/tick/history.js";

const MAX_LOG_LINES = 50;
export const MAX_LOG_BYTES = 16_384;
const MAX_LOG_MSG_CHARS = 2_000;

const utf8 = new TextEncoder();
const byteLength = (text: string) => utf8.encode(text).length;

/** The output as the history records it: storable and at most `maxBytes` of JSON, else left out and marked. */
export const recordOutput = (value: unknown, maxBytes: number): { output?: unknown; outputTruncated: boolean; bytes?: number } => {
  if (value === undefined) return { outputTruncated: false };
  // A UTF-8 byte per character at least: a walk stopped at maxBytes characters is over in bytes too.
  const copy = boundedJson(value, maxBytes);
  if (!copy.ok) return { outputTruncated: true };
  if (copy.value === undefined) return { outputTruncated: false };
  // At most three bytes a character: most outputs skip the encoding. `chars` counts numbers as stored
  // (an exponent in all its digits), which the JSON text does not: the difference is added to its bytes.
  if (copy.chars * 3 > maxBytes) {
    const json = JSON.stringify(copy.value);
    if (byteLength(json) + copy.chars - json.length > maxBytes) return { outputTruncated: true };
  }
  return { output: copy.value, outputTruncated: false, bytes: Math.min(copy.chars * 3, maxBytes) };
};

const UNPRINTABLE = "[unprintable message]";

/** A message as the ring keeps it: String(msg) that cannot throw, clipped before it is scanned. */
const messageText = (msg: unknown): string => {
  let text: string;
  try {
    text = typeof msg === "string" ? msg : String(msg);
  } catch {
    // A null-prototype object, a toString that throws: logging never fails a run.
    return UNPRINTABLE;
  }
  // One character past the clip decides a surrogate pair or a lone surrogate at the cut as the whole text would.
  return storableText(text.length > MAX_LOG_MSG_CHARS + 1 ? text.slice(0, MAX_LOG_MSG_CHARS + 1) : text, MAX_LOG_MSG_CHARS);
};

/** The fields as the ring keeps them, or why not: the walk stops at the ring's whole budget. */
const keptFields = (fields: Record<string, unknown>, again = false): Record<string, unknown> | "too_large" | undefined => {
  const copy = boundedJson(fields, MAX_LOG_BYTES);
  // A field that cannot be written costs only itself (a getter that throws once in two, all of them).
  if (!copy.ok) return copy.why === "too_large" ? "too_large" : again ? { fieldsDropped: true } : keptFields(writableFields(fields), true);
  const v = copy.value;
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
};

/**
 * A `ctx.log` line as the history and the process's log both keep it: storable, its message clipped,
 * its fields within MAX_LOG_BYTES (fields that would push out every other line are dropped, the line
 * kept). The process's log wrote a field of 5 MB as one line of 5 MB.
 */
export const logLine = (level: LogLevel, msg: unknown, fields?: Record<string, unknown>): { line: LogLine; bytes: number } => {
  const bare: LogLine = { at: new Date().toISOString(), level, msg: messageText(msg) };
  const kept = fields === undefined ? undefined : keptFields(fields);
  if (kept !== "too_large") {
    const line: LogLine = kept ? { ...bare, fields: kept } : bare;
    const bytes = byteLength(JSON.stringify(line));
    if (bytes <= MAX_LOG_BYTES) return { line, bytes };
  }
  return { line: { ...bare, fields: { fieldsDropped: true } }, bytes: byteLength(JSON.stringify(bare)) + 30 };
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
    this.add(logLine(level, msg, fields));
  }

  add({ line, bytes }: { line: LogLine; bytes: number }): void {
    this.lines.push({ line, bytes });
    this.bytes += bytes;
    while (this.lines.length > MAX_LOG_LINES || (this.bytes > MAX_LOG_BYTES && this.lines.length > 1)) this.bytes -= this.lines.shift()!.bytes;
  }

  get size(): number {
    return this.lines.length;
  }

  /** The bytes of the lines' JSON. */
  get byteSize(): number {
    return this.bytes;
  }

  toArray(): LogLine[] {
    return this.lines.map((l) => l.line);
  }
}
