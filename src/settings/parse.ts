import { JobsError } from "../errors.js";
import { parseDuration } from "./duration.js";
import { shownValue } from "../error-text.js";

/** The process environment, or a platform's bindings as strings. */
export type Env = Record<string, string | undefined>;

/** `invalid_config` naming the setting, what it must be and what it was. */
export const bad = (name: string, want: string, got: unknown): never => {
  throw new JobsError("invalid_config", `${name} must be ${want}, got ${shownValue(got)}`, { setting: name });
};

/** A whole number of at least `min` (a string from the environment, or a number from code). */
export const positiveInt = (name: string, value: unknown, min = 1, max = Number.MAX_SAFE_INTEGER): number => {
  // Decimal digits only: Number() also reads "0x10" and "1e2", which no one means for a count.
  const n = typeof value === "string" && /^\s*[-+]?\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > max) {
    return bad(name, max < Number.MAX_SAFE_INTEGER ? `an integer from ${min} to ${max}` : min === 1 ? "a positive integer" : `an integer of at least ${min}`, value);
  }
  return n;
};

// Timers cannot wait longer (setTimeout fires at once past 2^31 - 1 ms).
const MAX_DURATION_MS = 2_147_483_647;

/** A duration (`30s`, `2m`, `1500`), or `invalid_config` naming the setting. */
export const durationSetting = (name: string, value: unknown, minMs = 0): number => {
  const ms = typeof value === "string" || typeof value === "number" ? parseDuration(value) : undefined;
  if (ms === undefined || ms < minMs || ms > MAX_DURATION_MS) {
    return bad(name, `a duration${minMs > 0 ? ` of at least ${minMs} ms` : ""} such as 30s, 2m or 1500 (milliseconds), at most 24 days`, value);
  }
  return ms;
};

// Ten years: far past any retention anyone means, small enough for interval arithmetic.
const MAX_RETENTION_MS = 10 * 365 * 86_400_000;

/**
 * How long rows are kept (`7d`, `12h`), at least a minute; `off` when `offWord` is given
 * (history: keep none; dead letters: keep all) is `false`.
 */
export const retentionSetting = (name: string, value: unknown, offWord?: string): number | false => {
  if (offWord !== undefined && (value === false || (typeof value === "string" && value.trim().toLowerCase() === offWord))) return false;
  const ms = typeof value === "string" || typeof value === "number" ? parseDuration(value) : undefined;
  if (ms === undefined || ms < 60_000 || ms > MAX_RETENTION_MS) {
    return bad(name, `a duration of at least 1m such as 7d or 12h${offWord ? `, or ${offWord}` : ""}`, value);
  }
  return ms;
};

/** A port; `min` 1 where 0 (any free one) cannot be told to the process that listens on it. */
export const port = (name: string, value: string, min = 0): number => {
  const n = Number(value);
  return /^\d+$/.test(value) && n >= min && n <= 65_535 ? n : bad(name, `a port number (${min}-65535)`, value);
};

/** on/off (also 1/0, true/false, yes/no). */
export const onOff = (name: string, value: string): boolean => {
  const v = value.toLowerCase();
  if (["on", "1", "true", "yes"].includes(v)) return true;
  if (["off", "0", "false", "no"].includes(v)) return false;
  return bad(name, "on or off", value);
};

export const oneOf = <const T extends string>(...options: T[]) => (name: string, value: string): T =>
  (options as string[]).includes(value) ? (value as T) : bad(name, options.join(" or "), value);

export const commaList = (_name: string, value: string): string[] => value.split(",").map((s) => s.trim()).filter(Boolean);
