import { describe, expect, it } from "vitest";
import { ClaimPacing } from "../src/tick/claim-pacing.js";

const found = (claimed: number, over: { reclaimed?: number; flowHeld?: number; flowRetryAt?: number | null } = {}) => ({
  claimed: Array.from({ length: claimed }, () => ({}) as never),
  reclaimed: Array.from({ length: over.reclaimed ?? 0 }, () => "r"),
  flowHeld: over.flowHeld ?? 0,
  flowRetryAt: over.flowRetryAt ?? null,
});

describe("when a tick claims again", () => {
  it("claims again as soon as slots free after a full claim", () => {
    const p = new ClaimPacing(1_000);
    p.claimed(32, found(32), 10_000);
    expect(p.queueEmpty).toBe(false);
    expect(p.due(10_000, 32)).toBe(true);
    expect(p.doneBy(20_000)).toBe(false);
  });

  it("after a short claim, claims again at the claim interval while runs go on, and only when woken once none do", () => {
    const p = new ClaimPacing(1_000);
    p.claimed(32, found(5), 10_000);
    expect(p.queueEmpty).toBe(true);
    expect(p.due(10_999, 5)).toBe(false);
    expect(p.due(11_000, 5)).toBe(true);
    expect(p.nextAt(5)).toBe(11_000);
    expect(p.due(11_000, 0)).toBe(false);
    expect(p.nextAt(0)).toBeUndefined();
    expect(p.doneBy(20_000)).toBe(true);
    p.woken();
    expect(p.due(10_001, 0)).toBe(true);
  });

  it("after a claim held back by a concurrency limit, claims again as soon as runs end", () => {
    const p = new ClaimPacing(1_000);
    p.claimed(10, found(0, { flowHeld: 4 }), 10_000);
    expect(p.due(10_010, 1)).toBe(false);
    p.runsEnded(10_010, 1);
    expect(p.due(10_010, 0)).toBe(true);
    // With nothing held back, runs ending change nothing: the queue looked empty.
    p.claimed(10, found(2), 10_020);
    p.runsEnded(10_030, 1);
    expect(p.due(10_030, 1)).toBe(false);
  });

  it("a short claim that reclaimed expired leases is not an empty queue", () => {
    const p = new ClaimPacing(1_000);
    p.claimed(32, found(5, { reclaimed: 3 }), 10_000);
    expect(p.queueEmpty).toBe(false);
    expect(p.due(10_000, 0)).toBe(true);
  });

  it("jobs held back by a rate window are claimed when it has room; by concurrency, at the claim interval", () => {
    const p = new ClaimPacing(1_000);
    p.claimed(32, found(2, { flowHeld: 4, flowRetryAt: 10_250 }), 10_000);
    expect(p.queueEmpty).toBe(false);
    expect(p.due(10_249, 2)).toBe(false);
    expect(p.nextAt(2)).toBe(10_250);
    expect(p.doneBy(10_200)).toBe(true);
    expect(p.doneBy(10_300)).toBe(false);
    p.claimed(32, found(0, { flowHeld: 1 }), 10_500);
    expect(p.nextAt(0)).toBe(11_500);
  });

  it("while runs go on, claims again at the claim interval at the latest, however far off the rate window that held jobs back", () => {
    const p = new ClaimPacing(1_000);
    p.claimed(32, found(1, { flowHeld: 2, flowRetryAt: 10_000 + 3_600_000 }), 10_000);
    expect(p.nextAt(1)).toBe(11_000);
    expect(p.due(10_999, 1)).toBe(false);
    expect(p.due(11_000, 1)).toBe(true);
    // With nothing running, the window is what it waits for.
    expect(p.nextAt(0)).toBe(3_610_000);
    expect(p.due(11_000, 0)).toBe(false);
  });

  it("claims again when retries this tick wrote come due, unless a claim is due sooner", () => {
    const p = new ClaimPacing(1_000);
    p.claimed(32, found(5), 10_000);
    expect(p.doneBy(20_000)).toBe(true);
    p.retriesDue([10_300]);
    expect(p.queueEmpty).toBe(false);
    expect(p.due(10_299, 0)).toBe(false);
    expect(p.due(10_300, 0)).toBe(true);
    expect(p.doneBy(20_000)).toBe(false);
    p.claimed(32, found(32), 10_400);
    p.retriesDue([10_900]);
    expect(p.due(10_400, 0)).toBe(true);
  });

  it("still waits for a retry after a claim before its time came back short, and drops a distant one once nothing runs", () => {
    const p = new ClaimPacing(1_000);
    p.claimed(32, found(2), 10_000);
    p.retriesDue([10_600]);
    // A run ended: claim now (for held buckets); that claim is short, but the retry is still ahead.
    p.runsEnded(10_300, 1);
    p.claimed(32, found(0), 10_300);
    expect(p.queueEmpty).toBe(false);
    expect(p.nextAt(0)).toBe(10_600);
    // At its time the claim sees it; the next short claim finds the queue empty.
    p.claimed(32, found(1), 10_600);
    p.claimed(32, found(0), 10_700);
    expect(p.queueEmpty).toBe(true);

    const q = new ClaimPacing(1_000);
    q.claimed(32, found(2), 10_000);
    q.retriesDue([14_000]);
    q.runsEnded(10_300, 0);
    q.claimed(32, found(0), 10_300);
    expect(q.queueEmpty).toBe(true);
  });
});
