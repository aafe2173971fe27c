import type { JobsSettings } from "../settings/library.js";
import type { TickLimits } from "./limits.js";

/**
 * The shortest bound any statement gets, even past the deadline (the final requeue must have a chance),
 * unless the grace is shorter: a platform's limit is what the grace keeps the tick within.
 */
const MIN_STATEMENT_MS = 1_000;
/** The longest delay a timer takes (a longer one fires at once): a budget and a grace of 24 days each add up past it. */
const MAX_TIMER_MS = 2_147_483_647;

/** A tick's time: when it started, when it stops claiming and must end, and what each statement may take. */
export interface TickClock {
  readonly started: number;
  readonly deadline: number;
  /** No claim goes out after this. */
  readonly cutoff: number;
  /**
   * A claim's lease: past the deadline by the grace and the margin, never shorter than the setting. The grace
   * too: the tick may still be waiting on a statement for half of it before it aborts its runs, and its final
   * statement takes the rest; a lease that ended within it let another tick reclaim a job still running here.
   */
  leaseMs(): number;
  /** The bound of a statement sent now; the final one gets all the grace, the others half. */
  bound(final: boolean): number;
  /** The bound of a settlement sent after the tick's final statement: what is left of the grace (0: none). */
  lateBound(): number;
}

export const tickClock = (limits: Pick<TickLimits, "budgetMs" | "claimCutoffMs" | "graceMs"> & { readonly claimForMs?: number }, settings: Pick<JobsSettings, "leaseMs" | "leaseMarginMs">): TickClock => {
  const started = Date.now();
  const deadline = started + limits.budgetMs;
  const { graceMs } = limits;
  const floor = graceMs > 0 ? Math.min(MIN_STATEMENT_MS, graceMs) : MIN_STATEMENT_MS;
  return {
    started,
    deadline,
    cutoff: Math.min(deadline - limits.claimCutoffMs, started + (limits.claimForMs ?? Number.POSITIVE_INFINITY)),
    leaseMs: () => Math.max(settings.leaseMs, deadline + graceMs - Date.now() + settings.leaseMarginMs),
    bound: (final) => Math.min(MAX_TIMER_MS, Math.max(floor, deadline + (final ? graceMs : graceMs / 2) - Date.now())),
    lateBound: () => Math.min(MAX_TIMER_MS, Math.max(0, deadline + graceMs - Date.now())),
  };
};
