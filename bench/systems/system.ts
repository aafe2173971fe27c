/** The systems the benchmark compares, by the names results.json uses. */
export type SystemName = "ours" | "bare-sql" | "pg-boss" | "graphile-worker";

/**
 * One job queue under test, set up in its own database. Every system drains
 * the same no-op job with the same payloads.
 */
export interface DrainSystem {
  readonly name: SystemName;
  /** How it is configured, when a system is measured in more than one way. */
  readonly variant: string;
  /** A peer in the configuration its docs recommend: these define "the best peer" in the goals. */
  readonly recommended: boolean;
  /** The database it lives in (for server-side statement counts). */
  readonly database: string;
  /** Bulk-enqueues `n` no-op jobs with the system's own bulk API, in chunks of `chunk`. */
  fill(n: number, chunk: number): Promise<void>;
  /**
   * Runs the queue at `concurrency` until all `n` jobs are done. Returns the
   * milliseconds from the start until the last job was done; shutting a peer's
   * worker down afterwards is not timed.
   */
  drain(n: number, concurrency: number): Promise<DrainResult>;
  /** Jobs not yet done: after a drain this must be 0, or the run is thrown away. */
  remaining(): Promise<number>;
  /** Clears what a finished run leaves behind (not timed). */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export interface DrainResult {
  readonly ms: number;
  /** Dispatcher invocations it took (ours: ticks; bare-sql: step statements). */
  readonly ticks?: number;
}

/** The payload every system's jobs carry. */
export const payloadOf = (i: number) => ({ i });

export const chunks = <T>(n: number, size: number, make: (i: number) => T): T[][] => {
  const out: T[][] = [];
  for (let start = 0; start < n; start += size) {
    out.push(Array.from({ length: Math.min(size, n - start) }, (_, k) => make(start + k)));
  }
  return out;
};
