// The dev server's local cron: slot arithmetic, and that ticks never overlap.
import { describe, expect, it } from "vitest";
import { createTicker, nextSlot } from "../src/dev/ticker.js";
import type { TickReport } from "../src/index.js";

const report = (): TickReport => ({
  claimed: 0, succeeded: 0, retried: 0, deadLettered: 0, requeued: 0, leaseLost: 0, reclaimed: 0,
  startedAt: new Date().toISOString(), durationMs: 0, requeuedIds: [], statements: 1, slot: null, capped: false, spawned: 0,
});

/** A tick that runs until the test releases it (or its signal aborts it). */
const gatedTicks = () => {
  const gates: Array<() => void> = [];
  const signals: AbortSignal[] = [];
  let active = 0;
  let maxActive = 0;
  const tick = (signal: AbortSignal) =>
    new Promise<TickReport>((resolve) => {
      active++;
      maxActive = Math.max(maxActive, active);
      signals.push(signal);
      const done = () => (active--, resolve(report()));
      gates.push(done);
      signal.addEventListener("abort", done, { once: true });
    });
  return { tick, gates, signals, max: () => maxActive, started: () => signals.length };
};

const settle = () => new Promise((r) => setImmediate(r));

describe("dev ticker", () => {
  it("fires on multiples of the interval, like a cron at :00", () => {
    expect(nextSlot(Date.UTC(2030, 0, 1, 9, 0, 45), 60_000)).toBe(Date.UTC(2030, 0, 1, 9, 1, 0));
    expect(nextSlot(Date.UTC(2030, 0, 1, 9, 1, 0), 60_000)).toBe(Date.UTC(2030, 0, 1, 9, 2, 0));
    expect(nextSlot(12_300, 5_000)).toBe(15_000);
  });

  it("never runs two ticks at once: requests during a tick become one rerun after it", async () => {
    const g = gatedTicks();
    const reasons: string[] = [];
    const ticker = createTicker({ tick: g.tick, intervalMs: 3_600_000, onReport: (_r, reason) => reasons.push(reason) });
    ticker.start();
    await settle();
    expect(g.started()).toBe(1);
    ticker.kick();
    ticker.kick();
    ticker.kick();
    await settle();
    expect(g.started()).toBe(1);
    g.gates[0]!();
    await settle();
    await settle();
    expect(g.started()).toBe(2);
    g.gates[1]!();
    await settle();
    await settle();
    expect(g.started()).toBe(2);
    expect(reasons).toEqual(["start", "kick"]);
    expect(g.max()).toBe(1);
    await ticker.stop();
  });

  it("stop aborts the running tick through its signal and waits for it", async () => {
    const g = gatedTicks();
    const ticker = createTicker({ tick: g.tick, intervalMs: 3_600_000 });
    ticker.start();
    await settle();
    expect(g.signals[0]!.aborted).toBe(false);
    await ticker.stop();
    expect(g.signals[0]!.aborted).toBe(true);
    expect(ticker.ticks).toBe(1);
    ticker.kick();
    await settle();
    expect(g.started()).toBe(1);
  });
});
