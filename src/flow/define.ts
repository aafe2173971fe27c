import type { ConcurrencyLimit, RateLimit } from "../job.js";

/** The most starts a rate limit may allow per window: each bucket keeps that many start times. */
const MAX_RATE_LIMIT = 10_000;
const MAX_CONCURRENCY_LIMIT = 100_000;
/** The longest period a rate limit may have (the cleanup drops windows unwritten for longer). */
export const MAX_PERIOD_MS = 24 * 3_600_000;
const GROUP = /^(?! )[^\u0000-\u001f\u007f]{1,128}(?<! )$/u;

const positiveInt = (n: unknown, max: number) => Number.isInteger(n) && (n as number) >= 1 && (n as number) <= max;

/** A job's concurrency and rate limits, checked when it is defined; a TypeError naming the job and the field. */
export const checkFlowLimits = (job: string, concurrency: ConcurrencyLimit<never> | undefined, rate: RateLimit<never> | readonly RateLimit<never>[] | undefined): void => {
  const bad = (field: string, want: string) => {
    throw new TypeError(`job ${job}: ${field} must be ${want}`);
  };
  // A misspelt field would be taken silently: no key (every job in one bucket), no group (no limit shared).
  const only = (at: string, value: object, fields: readonly string[]) => {
    for (const k of Object.keys(value)) if (!fields.includes(k)) throw new TypeError(`job ${job}: ${at} has no field ${k} (it takes ${fields.join(", ")})`);
  };
  if (concurrency !== undefined) {
    if (typeof concurrency !== "object" || concurrency === null) bad("concurrency", "{ limit, key? }");
    only("concurrency", concurrency, ["limit", "key"]);
    if (!positiveInt(concurrency.limit, MAX_CONCURRENCY_LIMIT)) bad("concurrency.limit", `an integer from 1 to ${MAX_CONCURRENCY_LIMIT}`);
    if (concurrency.key !== undefined && typeof concurrency.key !== "function") bad("concurrency.key", "a function of the payload");
  }
  const rates = rate === undefined ? [] : Array.isArray(rate) ? rate : [rate as RateLimit<never>];
  rates.forEach((r, i) => {
    const at = Array.isArray(rate) ? `rateLimit[${i}]` : "rateLimit";
    if (typeof r !== "object" || r === null) bad(at, "{ limit, periodMs, key?, group? }");
    only(at, r, ["limit", "periodMs", "key", "group"]);
    if (!positiveInt(r.limit, MAX_RATE_LIMIT)) bad(`${at}.limit`, `an integer from 1 to ${MAX_RATE_LIMIT}`);
    if (!positiveInt(r.periodMs, MAX_PERIOD_MS)) bad(`${at}.periodMs`, "a whole number of milliseconds from 1 to 24 hours");
    if (r.key !== undefined && typeof r.key !== "function") bad(`${at}.key`, "a function of the payload");
    if (r.group !== undefined && (typeof r.group !== "string" || !GROUP.test(r.group))) bad(`${at}.group`, "1-128 characters with no control characters");
  });
};

/** A job's rate limits as a list (one, several or none). */
export const rateLimitsOf = (rate: RateLimit<never> | readonly RateLimit<never>[] | undefined): readonly RateLimit<never>[] =>
  rate === undefined ? [] : Array.isArray(rate) ? rate : [rate as RateLimit<never>];
