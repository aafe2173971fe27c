import type { DeadReason } from "../terms.js";
import type { TickReport } from "../tick/types.js";

/**
 * Hooks the queue calls as it works, for tracing and metrics (`pgtick/otel` is
 * one). The core knows only this interface, never a telemetry library: without
 * an observer nothing here runs. Every hook is optional, and one that throws is
 * logged once and ignored; it never fails an enqueue or a tick.
 */
export interface Observer {
  /**
   * The W3C `traceparent` of the request enqueueing now, stored with its jobs so
   * their runs link back to it. Anything but a valid traceparent is ignored.
   */
  traceparent?(): string | undefined;
  /** A tick starts; what it returns sees the tick's runs and its end. */
  tick?(info: TickInfo): TickObservation | undefined;
  /** Sends on what was recorded: a process about to exit (the CLI) calls it, waiting a few seconds at most. */
  flush?(): Promise<void>;
}

/** The brand: a private member, which a spread copy (`{ ...openTelemetry(), tick }`) leaves out, so TypeScript refuses it. */
declare class Wired {
  private readonly pgtickWired: true;
}

/**
 * An observer the queue can call: made by `openTelemetry()` or `defineObserver(hooks)`, which bring the
 * code that wires it (so a bundle without an observer carries none). A plain object of hooks is not one.
 */
export type WiredObserver = Observer & Wired;

export interface TickInfo {
  /** The queue's table prefix: which queue this tick serves. */
  readonly queue: string;
  readonly budgetMs: number;
  /** Started by another tick (fan-out or continuation), on a slot reserved for it. */
  readonly handoff: boolean;
}

export interface TickObservation {
  /** Runs `fn` (the whole tick) inside this observation's context. */
  within?<T>(fn: () => T): T;
  /** A claimed job's handler is about to run. */
  run?(info: RunInfo): RunObservation | undefined;
  /** Attempts this tick found abandoned by a tick that died (their leases had expired): no run of this tick's, so no `run`. */
  reclaimed?(runs: readonly ReclaimedRun[]): void;
  /** The tick ended: its report, or the error it failed with (a failed tick may still have a report). */
  end(report: TickReport | undefined, error?: unknown): void;
}

export interface RunInfo {
  readonly jobId: string;
  readonly jobName: string;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly correlationId: string | null;
  /** What `Observer.traceparent` gave when the job was enqueued. */
  readonly traceparent: string | null;
}

/** A job whose tick ended without settling its attempt (killed, or stopped by its platform), found once its lease expired. */
export interface ReclaimedRun {
  readonly jobId: string;
  readonly jobName: string;
  /** That was its last attempt: it is a dead letter now (reason `lease_expired`); else it is queued again. */
  readonly deadLettered: boolean;
}

/**
 * What became of a run, once the statement that settled it is back:
 * `requeued` at the tick's deadline, `lease_lost` when the fence refused its
 * write (another tick took the job over) or the write never went through.
 */
export type RunOutcome = "succeeded" | "retried" | "dead_lettered" | "requeued" | "lease_lost";

export interface RunEnd {
  readonly outcome: RunOutcome;
  readonly durationMs: number;
  /** What the handler threw (or why the attempt failed without one). */
  readonly error?: unknown;
  /** With `dead_lettered`: why. */
  readonly reason?: DeadReason;
}

export interface RunObservation {
  /** Calls the handler inside this run's context (so the handler's own spans nest under it). */
  within<T>(fn: () => T): T;
  end(result: RunEnd): void;
}
