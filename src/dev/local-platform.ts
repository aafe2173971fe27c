import { errorText } from "../error-text.js";
import { coalesced, postTick } from "../platform/kick.js";
import type { TickRequest } from "../http/tick-request.js";
import type { Handoff } from "../tick/types.js";

/** The next multiple of the interval after `now`: a 1-minute interval fires at :00 like a platform cron. */
export const nextSlot = (now: number, intervalMs: number): number => (Math.floor(now / intervalMs) + 1) * intervalMs;

export interface LocalPlatformOptions {
  /** The dev server's `/api/tick`. */
  readonly tickUrl: () => string;
  readonly cronSecret: string;
  readonly intervalMs: number;
  readonly onError: (error: unknown) => void;
  /** Clock, for the arithmetic of the next slot. */
  readonly now?: () => number;
  readonly fetch?: typeof fetch;
}

/**
 * `npm run dev` as a platform: every tick is an invocation of the server's own
 * `/api/tick` (POST with CRON_SECRET, answered 202 while the tick runs on), be
 * it the local cron's, a kick's or one a tick starts for a slot it reserved.
 * Ticks overlap as on a platform, up to JOBS_MAX_TICKS (the slots decide). The
 * server tracks the ticks it runs (`track`), so `stop` can wait for them to
 * requeue what they hold.
 */
export const createLocalPlatform = (options: LocalPlatformOptions) => {
  const now = options.now ?? Date.now;
  const running = new Set<Promise<unknown>>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  /** Ticks that failed once stopping began: what they held may not be back in the queue. */
  let failedStopping = 0;

  const invoke = (req: TickRequest) =>
    postTick({ CRON_SECRET: options.cronSecret }, { ...req, async: true }, options.fetch ?? fetch, options.tickUrl()).catch(options.onError);
  // One kick in flight; enqueues meanwhile share one more, as on a platform.
  const kick = coalesced(() => invoke({ kick: true }), options.onError);

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      void invoke({});
      schedule();
    }, Math.max(0, nextSlot(now(), options.intervalMs) - now()));
  };

  return {
    /** A cron tick now, then one at every multiple of the interval. */
    start() {
      void invoke({});
      schedule();
    },
    /** An enqueue of a job due now, when no running tick here had room for it. */
    kick: () => void (stopped ? undefined : kick()),
    /** Extra ticks for slots a tick reserved (fan-out, continuation). */
    spawn(handoffs: readonly Handoff[]) {
      for (const handoff of handoffs) if (!stopped) void invoke({ handoff });
    },
    /** Holds the server's tick runs, so `stop` waits for them. */
    track(work: Promise<unknown>) {
      const tracked = work
        .catch((error: unknown) => {
          if (stopped) failedStopping++;
          options.onError(new Error(`tick failed: ${errorText(error)}`));
        })
        .finally(() => running.delete(tracked));
      running.add(tracked);
    },
    get running() {
      return running.size;
    },
    /**
     * No more ticks; waits for the running ones (the caller aborts their signal first). Returns how many
     * failed meanwhile (a database that stopped answering): their running jobs may still be claimed.
     */
    async stop(): Promise<number> {
      stopped = true;
      clearTimeout(timer);
      while (running.size > 0) await Promise.allSettled([...running]);
      return failedStopping;
    },
  };
};
