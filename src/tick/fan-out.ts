import { errorText } from "../error-text.js";
import type { Logger } from "../log.js";
import type { FanOut, Handoff } from "../store/tick/slot.js";

/** How long a slot reserved for a tick that was asked to start waits for it. */
export const RESERVE_MS = 30_000;
/** A tick asks for more ticks at most this often. */
const FAN_OUT_EVERY_MS = 1_000;

/**
 * A tick's side of fan-out: what its claims ask for (slots reserved for more ticks when a
 * claim comes back full and more is due, at most once a second) and starting those ticks
 * through the platform's own invocation path.
 */
export class FanOutPacer {
  spawned = 0;
  private lastAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly start: ((handoffs: readonly Handoff[]) => void) | undefined,
    private readonly maxTicks: number,
    private readonly concurrency: number,
    private readonly logger: Logger,
  ) {}

  get enabled(): boolean {
    return this.start !== undefined;
  }

  /** The fan-out part of a claim of `want`, or undefined when this tick cannot or need not ask yet. */
  input(want: number): FanOut | undefined {
    if (!this.start || Date.now() - this.lastAt < FAN_OUT_EVERY_MS) return undefined;
    this.lastAt = Date.now();
    const { maxTicks, concurrency } = this;
    return { maxTicks, concurrency, want, bound: Math.min(10_000, concurrency * maxTicks + want), maxSpawn: maxTicks - 1, reserveMs: RESERVE_MS };
  }

  /** Starts a tick for each reserved slot; one that fails to start leaves its reservation to expire. */
  spawn(handoffs: readonly Handoff[]): void {
    if (handoffs.length === 0 || !this.start) return;
    this.spawned += handoffs.length;
    try {
      this.start(handoffs);
    } catch (error) {
      this.logger.log("warn", "starting more ticks failed; their reserved slots expire unused", { error: errorText(error) });
    }
  }
}
