import type { JobsSettings } from "../settings/library.js";
import { JobsError } from "../errors.js";
import type { TickOptions } from "./types.js";

/** Up to this concurrency a claim takes all the free slots by default. */
export const CLAIM_ALL_UP_TO = 64;

// A timer cannot wait past 2^31 - 1 ms (it would fire at once), so neither can a tick.
const MAX_TIMER_MS = 2_147_483_647;

export interface TickLimits {
  readonly budgetMs: number;
  readonly concurrency: number;
  readonly batchSize: number;
  readonly claimCutoffMs: number;
  readonly graceMs: number;
}

const bad = (field: string, want: string, got: unknown): never => {
  throw new JobsError("invalid_options", `tick option ${field} must be ${want}, got ${JSON.stringify(got)}`, { field });
};

const positiveInt = (field: string, value: number | undefined, fallback: number): number => {
  if (value === undefined) return fallback;
  return Number.isInteger(value) && value >= 1 ? value : bad(field, "a positive integer", value);
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
export const tickLimits = (settings: JobsSettings, options: TickOptions, statementsAtOnce?: number): TickLimits => {
  const budgetMs = Math.min(millis("budgetMs", options.budgetMs, settings.tickBudgetMs, 1), MAX_TIMER_MS);
  const concurrency = positiveInt("concurrency", options.concurrency, settings.concurrency);
  // All the slots per claim up to CLAIM_ALL_UP_TO, half of them above: a statement costs the server
  // a good part of a millisecond beside its rows, so a drain of short jobs at concurrency 32 ran about
  // a fifth faster on whole-slot claims than on half-slot claims in flight two at a time, where at
  // concurrency 100 two statements of 50 overlap the client's work and the server's better than one
  // of 100. (Runs that end apart still get a second statement for the slots they free.) On one
  // connection a second statement would only wait: all the slots then.
  const batchDefault = statementsAtOnce === 1 || concurrency <= CLAIM_ALL_UP_TO ? concurrency : Math.max(CLAIM_ALL_UP_TO, Math.ceil(concurrency / 2));
  const batchSize = Math.min(positiveInt("batchSize", options.batchSize, settings.batchSize ?? batchDefault), concurrency);
  const claimCutoffMs = Math.min(millis("claimCutoffMs", options.claimCutoffMs, settings.claimCutoffMs), budgetMs / 2);
  const graceMs = Math.min(millis("graceMs", options.graceMs, settings.graceMs), MAX_TIMER_MS);
  return { budgetMs, concurrency, batchSize, claimCutoffMs, graceMs };
};
