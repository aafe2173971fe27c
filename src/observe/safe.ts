import { errorText } from "../error-text.js";
import type { Logger } from "../log.js";
import type { TickReport } from "../tick/types.js";
import type { Observer, ReclaimedRun, RunEnd, RunInfo, TickInfo, WiredObserver } from "./observer.js";
import { type TickWatch, watchedTick } from "./watch.js";

/** Version 00 of the W3C trace context header, lower-case hex, ids not all zeros. */
const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

const isTraceparent = (value: unknown): value is string => typeof value === "string" && TRACEPARENT.test(value);

export interface SafeRun {
  within<T>(fn: () => T): T;
  /** Only the first call counts. */
  end(result: RunEnd): void;
}

export interface SafeTick {
  within<T>(fn: () => T): T;
  run(info: RunInfo): SafeRun | undefined;
  reclaimed(runs: readonly ReclaimedRun[]): void;
  /** Only the first call counts. */
  end(report: TickReport | undefined, error?: unknown): void;
}

/** An observer as the queue calls it: never throws, and says what it returns is well formed. */
export interface SafeObserver {
  traceparent(): string | undefined;
  /** Runs a tick's loop under the observer: with the watch it tells of its runs, or bare when the observer makes no tick. */
  observe(info: TickInfo, loop: (watch: TickWatch | undefined) => Promise<TickReport>): Promise<TickReport>;
}

/** Where an observer made by `defineObserver` keeps how the queue wires it (shared by every copy of this module). */
export const WIRE = Symbol.for("pgtick.observer");

/**
 * An observer for `createJobs({ observer })`: the hooks as given, with what the queue needs to call them
 * safely. `openTelemetry()` makes one; an observer of your own goes through here. The code that wires an
 * observer comes with this function, so a bundle without an observer (a Worker's) carries none of it.
 */
export const defineObserver = <O extends Observer>(hooks: O): O & WiredObserver => {
  // Not enumerable: a spread copy (`{ ...openTelemetry(), tick }`) is refused, not wired to the hooks it copied.
  const own = Object.isExtensible(hooks) ? hooks : { ...hooks };
  Object.defineProperty(own, WIRE, { value: (logger: Logger): SafeObserver => safeObserver(own, logger), configurable: true });
  return own as O & WiredObserver;
};

/**
 * Wraps a user's observer so that a hook that throws costs only its telemetry:
 * the first failure is logged, the rest are silent, and the queue goes on.
 */
const safeObserver = (observer: Observer, logger: Logger): SafeObserver => {
  let logged = false;
  const failed = (hook: string, error: unknown) => {
    if (!logged) logger.log("warn", "observer failed; later failures are not logged", { hook, error: errorText(error) });
    logged = true;
  };
  const attempt = <R>(hook: string, call: () => R): R | undefined => {
    try {
      return call();
    } catch (error) {
      failed(hook, error);
      return undefined;
    }
  };
  /**
   * Calls `fn` inside the observer's `within` and returns what `fn` returned, whatever `within` does with
   * it: a `within` that drops it, or never calls `fn`, costs only the telemetry (`fn` then runs bare,
   * once, even if `within` calls it later). A failure of `fn` is `fn`'s.
   */
  const guardedWithin = <T>(hook: string, within: (<U>(fn: () => U) => U) | undefined, fn: () => T): T => {
    if (!within) return fn();
    // Set inside the callback, read after it: typed wide so the checks below are not narrowed away.
    let state = "before" as "before" | "threw" | "returned" | "bare";
    let value: T | undefined;
    let broke: unknown;
    try {
      const returned = within(() => {
        if (state !== "before") return value;
        try {
          value = fn();
        } catch (error) {
          state = "threw";
          throw error;
        }
        state = "returned";
        return value;
      });
      if (state === "returned" && returned !== value) broke = new Error("within did not return what the function returned");
    } catch (error) {
      if (state === "threw") throw error;
      broke = error;
    }
    if (state === "returned") {
      if (broke !== undefined) failed(hook, broke);
      return value as T;
    }
    failed(hook, broke ?? new Error("within did not call the function it was given"));
    state = "bare";
    return fn();
  };
  const once = <A extends unknown[]>(hook: string, f: (...args: A) => void) => {
    let done = false;
    return (...args: A) => {
      if (done) return;
      done = true;
      attempt(hook, () => f(...args));
    };
  };
  const safeTick = (info: TickInfo): SafeTick | undefined => {
    const tick = observer.tick ? attempt("tick", () => observer.tick!(info)) : undefined;
    if (!tick) return undefined;
    return {
      within: (fn) => guardedWithin("tick.within", tick.within?.bind(tick), fn),
      run(runInfo) {
        const run = tick.run ? attempt("run", () => tick.run!(runInfo)) : undefined;
        if (!run) return undefined;
        return { within: (fn) => guardedWithin("run.within", run.within.bind(run), fn), end: once("run.end", (result: RunEnd) => run.end(result)) };
      },
      reclaimed: (runs) => void (tick.reclaimed && attempt("reclaimed", () => tick.reclaimed!(runs))),
      end: once("tick.end", (report: TickReport | undefined, error?: unknown) => tick.end(report, error)),
    };
  };

  return {
    traceparent() {
      const value = observer.traceparent ? attempt("traceparent", () => observer.traceparent!()) : undefined;
      return isTraceparent(value) ? value : undefined;
    },
    observe(info, loop) {
      const tick = safeTick(info);
      return tick ? watchedTick(tick, loop) : loop(undefined);
    },
  };
};