import type { JobsSettings } from "../settings/library.js";
import type { Db } from "../db.js";
import type { AnyJob } from "../job.js";
import type { FlowSpec } from "../flow/spec.js";
import type { Logger } from "../log.js";
import type { SafeObserver } from "../observe/safe.js";
import type { Tables } from "../store/shared/tables.js";
import type { Handoff, TickCounts } from "../store/tick/slot.js";
import type { QueueMinute } from "../store/tick/step.js";

export type { Handoff, TickCounts } from "../store/tick/slot.js";

export interface TickOptions {
  /** How long this tick may run handlers. Default: the `tickBudgetMs` setting. */
  readonly budgetMs?: number | undefined;
  /** Handlers at once. Default: the `concurrency` setting. */
  readonly concurrency?: number | undefined;
  /** Rows per claim statement (never more than the free slots). Default: the `batchSize` setting. */
  readonly batchSize?: number | undefined;
  /** Stop claiming this long before the deadline. Default: the `claimCutoffMs` setting, at most half the budget. */
  readonly claimCutoffMs?: number | undefined;
  /**
   * Claim only this long after the start; what was claimed still runs to the budget. A tick started
   * by an enqueue (the kick) claims briefly: a job it started must not be cut short by its claiming
   * window, or a job longer than that lost an attempt to every kick. Default: no such window.
   */
  readonly claimForMs?: number | undefined;
  /**
   * How long past the deadline the tick may take to settle and requeue what it
   * holds: every statement is bounded by the time left plus this. Default: the
   * `graceMs` setting. Platforms pass part of their safety margin.
   */
  readonly graceMs?: number | undefined;
  /** Ends the tick early, as if its deadline had come (a platform shutdown, Ctrl-C). */
  readonly signal?: AbortSignal | undefined;
  /** A slot reserved for this tick by the tick that asked for it (fan-out, continuation). */
  readonly handoff?: Handoff | undefined;
  /**
   * Starts more ticks, each a separate invocation, for slots reserved for them
   * (fan-out when more is due than this tick can take; continuation when it
   * reaches its cutoff with work left). Without it a tick never fans out. A returned promise that
   * rejects says the ticks did not start: their reserved slots are freed at once, and this tick
   * asks for no more (a refusing target would otherwise hold every slot until the reservations expire).
   */
  readonly spawn?: (handoffs: readonly Handoff[]) => void | Promise<unknown>;
}

export interface TickReport extends TickCounts {
  readonly startedAt: string;
  readonly durationMs: number;
  /** Ids of the runs the deadline cut short and returned to the queue (not those that became dead letters). */
  readonly requeuedIds: readonly string[];
  /** Claimed jobs that came back too late to start (a statement held up past the deadline, or the tick stopped): back in the queue with their attempt, no run. */
  readonly unstarted: number;
  /** Statements this tick sent. */
  readonly statements: number;
  /** The tick slot it held; null when it found no work, or no free slot (`capped`). */
  readonly slot: number | null;
  /** True when every slot was taken: the tick claimed nothing and returned (after its schedules enqueued any, once it had tried again for a slot for about a second). */
  readonly capped: boolean;
  /** Extra ticks it asked for (fan-out and continuation). */
  readonly spawned: number;
  /** The queue's depth and oldest wait, when this tick was the first of its minute (they are recorded once a minute). */
  readonly queue: QueueMinute | null;
  /** What the cleanup of old history, metrics and dead letters deleted, when this tick ran it. */
  readonly cleaned: { readonly runs: number; readonly metrics: number; readonly flow: number; readonly deadLetters?: number } | null;
}

/**
 * A feature that rides on the tick (cron schedules do): it adds columns to the
 * tick's first statement, so an idle tick stays one statement, and acts only
 * when those values say there is work.
 */
export interface TickExtension {
  probe(t: Tables): string[];
  /** Returns how many jobs it enqueued, so the tick knows to claim again. */
  afterProbe(values: Record<string, unknown>, tick: { db: Db; tables: Tables; logger: Logger }): Promise<number>;
}

export interface TickEnv {
  readonly extensions?: readonly TickExtension[];
  readonly db: Db;
  readonly tables: Tables;
  readonly registry: ReadonlyMap<string, AnyJob>;
  readonly settings: JobsSettings;
  readonly logger: Logger;
  readonly random?: () => number;
  /** The jobs' limits (flow control), read once at createJobs. */
  readonly flow?: FlowSpec;
  /** Sees the tick and its runs (tracing, metrics); absent, nothing is observed. */
  readonly observer?: SafeObserver;
  /**
   * The migration this code needs, and the error for tables at an older one: the tick's first statement
   * takes no slot on them, and the tick fails with that error. Absent: not checked.
   */
  readonly schema?: { readonly needs: number; readonly behind: (at: number) => Error };
  /** What handlers get as `ctx.db` (absent: `db`): the app's own statements, whose errors are theirs. */
  readonly handlerDb?: Db;
}
