import type { TickReport } from "../tick/types.js";

export interface TickerOptions {
  /** Runs one tick; the signal aborts it (it then requeues what it holds and returns). */
  readonly tick: (signal: AbortSignal) => Promise<TickReport>;
  readonly intervalMs: number;
  readonly onReport?: (report: TickReport, reason: TickReason) => void;
  readonly onError?: (error: unknown) => void;
  /** Clock, for the arithmetic of the next slot. */
  readonly now?: () => number;
}

export type TickReason = "start" | "schedule" | "kick";

/** The next multiple of the interval after `now`: a 1-minute interval fires at :00 like a platform cron. */
export const nextSlot = (now: number, intervalMs: number): number => (Math.floor(now / intervalMs) + 1) * intervalMs;

/**
 * The local stand-in for the platform cron: a tick at start, then one at every
 * multiple of the interval, and one soon after each kick (an enqueue of a job
 * due now). Ticks never overlap: a request while one runs becomes one rerun
 * after it. `stop` aborts the running tick and waits for it to return.
 */
export const createTicker = (options: TickerOptions) => {
  const now = options.now ?? Date.now;
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;
  let again: TickReason | undefined;
  let ticks = 0;

  const run = (reason: TickReason): Promise<void> => {
    if (controller.signal.aborted) return Promise.resolve();
    if (running) {
      again ??= reason;
      return running;
    }
    running = (async () => {
      let next: TickReason | undefined = reason;
      while (next && !controller.signal.aborted) {
        again = undefined;
        try {
          const report = await options.tick(controller.signal);
          ticks++;
          options.onReport?.(report, next);
        } catch (error) {
          options.onError?.(error);
        }
        next = again;
      }
    })().finally(() => (running = undefined));
    return running;
  };

  const schedule = () => {
    if (controller.signal.aborted) return;
    timer = setTimeout(() => {
      void run("schedule");
      schedule();
    }, Math.max(0, nextSlot(now(), options.intervalMs) - now()));
  };

  return {
    start() {
      void run("start");
      schedule();
    },
    /** A tick soon, as the platform's low-latency kick does. */
    kick: () => void run("kick"),
    get ticks() {
      return ticks;
    },
    async stop(): Promise<void> {
      clearTimeout(timer);
      controller.abort();
      await running;
    },
  };
};
