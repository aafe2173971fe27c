import type { JobsSettings } from "../settings/library.js";
import { JobsError } from "../errors.js";
import type { TickOptions } from "./types.js";

/** Up to this concurrency a claim takes all the free slots by default; above it, half of them. */
export const CLAIM_ALL_UP_TO = 16;

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
  // Half the slots per claim by default: when many runs end together (short jobs), one statement
  // settles and claims for half while the other is out, so the database and the client overlap.
  // Up to CLAIM_ALL_UP_TO slots, all of them: a statement costs the server a good part of a
  // millisecond beside its rows, which claims of a few rows would pay again and again (at concurrency
  // 10, whole-slot claims drained as fast with about a third less server time per job). On one
  // connection the second statement would only wait: all the slots then.
  const batchDefault =
    statementsAtOnce === 1 || concurrency <= CLAIM_ALL_UP_TO ? concurrency : Math.max(CLAIM_ALL_UP_TO, Math.ceil(concurrency / 2));
  const batchSize = Math.min(positiveInt("batchSize", options.batchSize, settings.batchSize ?? batchDefault), concurrency);
  const claimCutoffMs = Math.min(millis("claimCutoffMs", options.claimCutoffMs, settings.claimCutoffMs), budgetMs / 2);
  const graceMs = Math.min(millis("graceMs", options.graceMs, settings.graceMs), MAX_TIMER_MS);
  return { budgetMs, concurrency, batchSize, claimCutoffMs, graceMs };
};
