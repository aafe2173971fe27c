// Waiting for a job's result over the HTTP API: polls the job until it succeeded or died.
import type { JobView } from "../store/admin/views.js";

export interface WaitOptions {
  /** Give up after this long (default 30 s): rejects with a `JobsWaitError` of code `timeout`. */
  readonly timeoutMs?: number;
  /** First pause between polls (default 250 ms); it doubles up to 2 s. */
  readonly intervalMs?: number;
  /** Stops waiting (rejects with the signal's reason). */
  readonly signal?: AbortSignal;
}

/** Why `waitForResult` gave up: the job died (`dead`), was cancelled (`cancelled`), is not known (`not_found`), or time ran out (`timeout`). */
export class JobsWaitError extends Error {
  override readonly name = "JobsWaitError";
  constructor(
    readonly code: "dead" | "cancelled" | "not_found" | "timeout",
    message: string,
    /** The job as last seen (for `dead`: its reason and last error). */
    readonly job: JobView | null,
  ) {
    super(message);
  }
}

/** A poll's failure that the next poll may not meet: the server or the network, not the request. */
const passing = (e: unknown): boolean => {
  const status = (e as { status?: unknown } | null)?.status;
  // fetch rejects with a TypeError when the network fails; the API answers 503 when the database does not.
  return e instanceof TypeError || status === 502 || status === 503 || status === 504;
};

const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => (signal?.removeEventListener("abort", onAbort), resolve()), ms);
    const onAbort = () => (clearTimeout(timer), reject(signal!.reason));
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/**
 * Polls `get(id)` until the job succeeded (its output) or died, within the timeout. The timeout and
 * the signal also end a poll that is out (its request is aborted); a poll the server or the network
 * failed is tried again at the next interval.
 */
export const waitForResult = async (
  get: (id: string, signal: AbortSignal) => Promise<JobView | null>,
  id: string,
  options: WaitOptions = {},
): Promise<unknown> => {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const until = Date.now() + timeoutMs;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  let interval = options.intervalMs ?? 250;
  let seen: JobView | null = null;
  const ended = () => {
    if (options.signal?.aborted) return options.signal.reason as unknown;
    return new JobsWaitError("timeout", `job ${id} is ${seen ? `still ${seen.status}` : "not seen yet"} after ${timeoutMs} ms`, seen);
  };
  for (;;) {
    let job: JobView | null;
    try {
      job = await get(id, signal);
    } catch (e) {
      if (signal.aborted) throw ended();
      if (!passing(e)) throw e;
      await pause(Math.min(interval, Math.max(0, until - Date.now())), signal).catch(() => {
        throw ended();
      });
      interval = Math.min(interval * 2, 2_000);
      continue;
    }
    seen = job;
    if (job?.status === "succeeded") return job.output;
    if (job?.status === "dead") throw new JobsWaitError("dead", `job ${id} died (${job.reason ?? "dead"}): ${job.lastError ?? "no error recorded"}`, job);
    if (job?.status === "cancelled") throw new JobsWaitError("cancelled", `job ${id} was cancelled`, job);
    if (!job) throw new JobsWaitError("not_found", `no job ${id}: never enqueued, or older than the run history keeps`, null);
    const left = until - Date.now();
    if (left <= 0) throw ended();
    await pause(Math.min(interval, left), signal).catch(() => {
      throw ended();
    });
    interval = Math.min(interval * 2, 2_000);
  }
};
