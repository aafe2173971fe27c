// Arithmetic of the tick that no setting may break: a retry's delay and a statement's bound.
import { describe, expect, it } from "vitest";
import { backoffMs } from "../src/tick/backoff.js";
import { tickClock } from "../src/tick/clock.js";

describe("backoff", () => {
  it("is a number at every attempt, even with a base of 0 and a factor that grows past a double (0 × Infinity was NaN: the retry was refused)", () => {
    for (const options of [{ baseMs: 0, factor: 1e300 }, { baseMs: 0, factor: 10 }, { baseMs: 1, factor: 1e300, maxMs: 1e9 }]) {
      for (const attempt of [1, 2, 3, 310, 1_000]) {
        const ms = backoffMs(attempt, options, () => 0.5);
        expect(Number.isFinite(ms), `${JSON.stringify(options)} attempt ${attempt}`).toBe(true);
        expect(ms).toBeGreaterThanOrEqual(0);
      }
    }
    expect(backoffMs(3, { baseMs: 0, factor: 1e300 }, () => 0.5)).toBe(0);
  });

  it("grows by its factor with each attempt up to its cap, half of it fixed and half random", () => {
    const at = (attempt: number, random: number) => backoffMs(attempt, { baseMs: 1_000, factor: 3, maxMs: 20_000 }, () => random);
    // Attempt n: base x factor^(n-1), capped; the delay lies between half of that and all of it.
    expect([1, 2, 3, 4].map((n) => at(n, 0))).toEqual([500, 1_500, 4_500, 10_000]);
    expect([1, 2, 3, 4].map((n) => at(n, 1))).toEqual([1_000, 3_000, 9_000, 20_000]);
    // The defaults: 5 s doubling.
    expect([1, 2, 3].map((n) => backoffMs(n, {}, () => 1))).toEqual([5_000, 10_000, 20_000]);
  });
});

describe("a statement's bound", () => {
  it("stays within what a timer takes when the budget and the grace, each within it, add up past it", () => {
    const day = 86_400_000;
    const clock = tickClock({ budgetMs: 24 * day, claimCutoffMs: 1_000, graceMs: 24 * day }, { leaseMs: 60_000, leaseMarginMs: 1_000 });
    for (const final of [false, true]) expect(clock.bound(final)).toBeLessThanOrEqual(2 ** 31 - 1);
    expect(clock.lateBound()).toBeLessThanOrEqual(2 ** 31 - 1);
  });

  it("past the deadline is at least a second, or the grace when that is shorter (a platform's limit is what the grace keeps)", () => {
    const past = (graceMs: number) => tickClock({ budgetMs: -5_000, claimCutoffMs: 0, graceMs }, { leaseMs: 60_000, leaseMarginMs: 1_000 });
    expect(past(200).bound(true)).toBe(200);
    expect(past(200).bound(false)).toBe(200);
    expect(past(5_000).bound(true)).toBe(1_000);
    expect(past(0).bound(true)).toBe(1_000);
  });
});
