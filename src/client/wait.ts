// Waiting for a job's result over the HTTP API: polls the job until it succeeded or died.
import type { JobView } from "../store/admin/views.js";

export interface WaitOptions {
  /** Give up after this long (default 30 s): rejects with a `JobsWaitError` of code `timeout`. */
  readonly timeoutMs?: number | undefined;
  /** First pause between polls (default 250 ms, at least 50 ms); it doubles up to 2 s. */
  readonly intervalMs?: number | undefined;
  /** Stops waiting (rejects with the signal's reason). */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Why `waitForResult` gave up: the job died (`dead`), was cancelled (`cancelled`), is not known
 * (`not_found`), time ran out (`timeout`), or it succeeded with an output too large to keep (`output_truncated`).
 */
export class JobsWaitError extends Error {
  override readonly name = "JobsWaitError";
  constructor(
    readonly code: "dead" | "cancelled" | "not_found" | "timeout" | "output_truncated",
    message: string,
    /** The job as last seen (for `dead`: its reason and last error). */
    readonly job: JobView | null,
  ) {
    super(message);
  }
}

/** What fetch rejects with when the network failed (Node, Chromium, Firefox, Safari, workerd), not a bug. */
const NETWORK_FAILURE = /fetch failed|failed to fetch|networkerror|load failed|network connection lost/i;

/** A poll's failure that the next poll may not meet: the server or the network, not the request. */
const passing = (e: unknown): boolean => {
  const status = (e as { status?: unknown } | null)?.status;
  return (e instanceof TypeError && NETWORK_FAILURE.test(e.message)) || status === 502 || status === 503 || status === 504;
};

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => (signal.removeEventListener("abort", onAbort), resolve()), ms);
    const onAbort = () => (clearTimeout(timer), reject(signal.reason));
    signal.addEventListener("abort", onAbort, { once: true });
  });

/**
 * `p`, or the signal's reason once it aborts: the wait ends at its timeout even where the poll does not (a
 * fetch wrapper that drops the request's signal, or a Request whose signal never followed the wait's).
 */
const orAbort = <T>(p: Promise<T>, signal: AbortSignal): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (value) => (signal.removeEventListener("abort", onAbort), resolve(value)),
      (error: unknown) => (signal.removeEventListener("abort", onAbort), reject(error)),
    );
  });

/** However short the timeout, the first poll has this long to answer (a finished job is then returned). */
const FIRST_POLL_MS = 1_000;
const MIN_INTERVAL_MS = 50;
/** The longest delay a timer takes; a wait longer than this is not cut. */
const MAX_TIMER_MS = 2 ** 31 - 1;

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
  const given = options.timeoutMs ?? 30_000;
  const timeoutMs = Number.isNaN(given) || given < 0 ? 0 : given;
  const until = Date.now() + timeoutMs;
  const external = options.signal;
  if (external?.aborted) throw external.reason;
  // One controller for the deadline and the caller's signal (AbortSignal.any is missing from some
  // runtimes the client runs in), its timer and listener removed when the wait ends.
  const controller = new AbortController();
  const cutAt = Math.max(timeoutMs, FIRST_POLL_MS);
  let timer = cutAt <= MAX_TIMER_MS ? setTimeout(() => controller.abort(), cutAt) : undefined;
  // Once the first poll is back, a timeout shorter than its grace cuts at the timeout itself.
  let graced = cutAt > timeoutMs;
  const firstPollBack = () => {
    if (!graced || controller.signal.aborted) return;
    graced = false;
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(), Math.max(0, until - Date.now()));
  };
  const onAbort = () => controller.abort(external!.reason);
  external?.addEventListener("abort", onAbort, { once: true });
  // A zero or negative interval would poll as fast as the server answers.
  let interval = Math.max(MIN_INTERVAL_MS, Number.isNaN(options.intervalMs) ? 0 : (options.intervalMs ?? 250));
  let seen: JobView | null = null;
  let failure: unknown;
  const ended = () => {
    if (external?.aborted) return external.reason as unknown;
    const error = new JobsWaitError("timeout", `job ${id} is ${seen ? `still ${seen.status}` : "not seen yet"} after ${timeoutMs} ms`, seen);
    if (failure !== undefined) Object.defineProperty(error, "cause", { value: failure, enumerable: false });
    return error;
  };
  const rest = async () => {
    const left = until - Date.now();
    if (left <= 0) throw ended();
    await pause(Math.min(interval, left), controller.signal).catch(() => {
      throw ended();
    });
    // Doubling up to 2 s, never below what the caller asked for (5 s fell back to 2 s after one poll).
    interval = Math.max(Math.min(interval * 2, 2_000), interval);
  };
  try {
    for (;;) {
      let job: JobView | null;
      try {
        job = await orAbort(get(id, controller.signal), controller.signal);
      } catch (e) {
        if (controller.signal.aborted) throw ended();
        firstPollBack();
        if (!passing(e)) throw e;
        failure = e;
        await rest();
        continue;
      }
      seen = job;
      firstPollBack();
      if (job?.status === "succeeded") {
        // Its output was not kept: null here would pass for a value of the output's type.
        if (job.outputTruncated) throw new JobsWaitError("output_truncated", `job ${id} succeeded, but what it returned was too large to keep (JOBS_MAX_OUTPUT_BYTES) or not JSON`, job);
        return job.output;
      }
      if (job?.status === "dead") throw new JobsWaitError("dead", `job ${id} died (${job.reason ?? "dead"}): ${job.lastError ?? "no error recorded"}`, job);
      if (job?.status === "cancelled") throw new JobsWaitError("cancelled", `job ${id} was cancelled`, job);
      if (!job) throw new JobsWaitError("not_found", `no job ${id}: never enqueued, or older than the run history keeps (with history off, a finished job is not kept at all)`, null);
      await rest();
    }
  } finally {
    clearTimeout(timer);
    external?.removeEventListener("abort", onAbort);
  }
};
