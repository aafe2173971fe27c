import type { JobsSettings } from "../settings/library.js";
import { isUuid } from "../ids.js";
import { JobsError } from "../errors.js";
import { MAX_CONCURRENCY, MIN_GRACE_MS } from "../terms.js";
import { shownValue } from "../error-text.js";
import type { TickOptions } from "./types.js";

// A timer cannot wait past 2^31 - 1 ms (it would fire at once), so neither can a tick.
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The most payload text one claim may bring back, counting each payload at twice its limit (jsonb's
 * text adds a space after every comma and colon). A claim's rows arrive as one string: 520 payloads
 * of 1 MB passed the longest string V8 makes (2^29 characters), and the driver threw outside any
 * handler (the process died, the jobs stayed running). With the default 1 MiB limit, 128 jobs a
 * claim: a tick of concurrency 100 still fills its slots in one (at 32 it drained a third slower).
 */
export const MAX_CLAIM_BYTES = 256 * 1024 * 1024;

export interface TickLimits {
  readonly budgetMs: number;
  readonly concurrency: number;
  readonly batchSize: number;
  /** Statements out at once: 2 (a settle-and-claim for slots that freed while one is out), 1 on a single connection. */
  readonly inFlight: number;
  readonly claimCutoffMs: number;
  /** Claims end this long after the start at the latest (see TickOptions.claimForMs); Infinity: no window. */
  readonly claimForMs: number;
  readonly graceMs: number;
}

const bad = (field: string, want: string, got: unknown): never => {
  throw new JobsError("invalid_options", `tick option ${field} must be ${want}, got ${shownValue(got)}`, { field });
};

/** A whole number of at least 1, at most `max`. */
const positiveInt = (field: string, value: number | undefined, fallback: number, max = Number.MAX_SAFE_INTEGER): number => {
  if (value === undefined) return fallback;
  if (Number.isInteger(value) && value >= 1 && value <= max) return value;
  return bad(field, max < Number.MAX_SAFE_INTEGER ? `an integer from 1 to ${max}` : "a positive integer", value);
};

const millis = (field: string, value: number | undefined, fallback: number, min = 0): number => {
  if (value === undefined) return fallback;
  return typeof value === "number" && Number.isFinite(value) && value >= min ? value : bad(field, `a number of milliseconds of at least ${min}`, value);
};

/**
 * The options of one tick over the settings, checked (`invalid_options` naming
 * the option), with the cutoff at most half the budget: the one place a tick's
 * limits are decided.
 */
export const tickLimits = (settings: JobsSettings, options: TickOptions, statementsAtOnce?: number, maxResultBytes?: number): TickLimits => {
  const budgetMs = Math.min(millis("budgetMs", options.budgetMs, settings.tickBudgetMs, 1), MAX_TIMER_MS);
  const concurrency = positiveInt("concurrency", options.concurrency, settings.concurrency, MAX_CONCURRENCY);
  // All the free slots per claim by default. A statement costs the server the better part of a
  // millisecond beside its rows, and claims of half the slots (two statements in flight while short
  // jobs drain) paid that twice as often: in alternating drains here at concurrency 32 they were no
  // faster, or 7-24% slower, with about a third more CPU per job (bench/profile/cpu-split.ts). A
  // second statement still goes out for slots that free while one is out, except on one connection,
  // where it would only wait.
  // Over Neon's HTTP endpoint, a claim's result must come back under its limit too (2 at the default 1 MiB payloads).
  const byBytes = Math.max(1, Math.floor(Math.min(MAX_CLAIM_BYTES, maxResultBytes ?? Infinity) / (2 * settings.maxPayloadBytes)));
  const batchSize = Math.min(positiveInt("batchSize", options.batchSize, settings.batchSize ?? concurrency), concurrency, byBytes);
  const claimCutoffMs = Math.min(millis("claimCutoffMs", options.claimCutoffMs, settings.claimCutoffMs), budgetMs / 2);
  const graceMs = Math.min(millis("graceMs", options.graceMs, settings.graceMs), MAX_TIMER_MS);
  // A few milliseconds leave the final statement no time to requeue what runs; 0 gives each statement a second's floor.
  if (graceMs > 0 && graceMs < MIN_GRACE_MS) bad("graceMs", `0 or at least ${MIN_GRACE_MS} ms`, options.graceMs);
  const claimForMs = millis("claimForMs", options.claimForMs, Number.POSITIVE_INFINITY);
  const inFlight = statementsAtOnce === 1 ? 1 : 2;
  // What a tick's spawn hands on, given back as it was (a transport of one's own may garble it).
  const h = options.handoff;
  if (h !== undefined && !(Number.isInteger(h?.slot) && h.slot >= 1 && typeof h.token === "string" && isUuid(h.token))) bad("handoff", "the { slot, token } a spawn was given", h);
  return { budgetMs, concurrency, batchSize, inFlight, claimCutoffMs, claimForMs, graceMs };
};
