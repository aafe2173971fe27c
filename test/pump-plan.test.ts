import { describe, expect, it } from "vitest";
import { pipelineMinFor, planStatement, type PumpState, SETTLE_WAIT_MS, settleDueAt } from "../src/tick/pump-plan.js";

// A tick at concurrency 32 with two connections: a second statement needs 8, a batch of 128 goes at once.
const at = (over: Partial<PumpState>): PumpState => ({
  pending: 0, pendingSince: 1_000, settling: 0, inflight: 0, maxInFlight: 2, want: 0, claiming: 0, now: 1_000, pipelineMin: 8, settleBatch: 128, ...over,
});

describe("what a tick sends next", () => {
  it("on one connection, settlements ride in the claim", () => {
    expect(planStatement(at({ maxInFlight: 1, pending: 32, want: 32 }))).toEqual({ settle: true, claim: 32 });
  });

  it("with two connections, a few settlements ride in the claim", () => {
    expect(planStatement(at({ pending: 3, want: 5 }))).toEqual({ settle: true, claim: 5 });
  });

  it("holds one claim's worth of settlements while a claim is wanted: the claim goes alone", () => {
    expect(planStatement(at({ pending: 32, want: 32 }))).toEqual({ settle: false, claim: 32 });
    // With that claim out, the batch still waits (it is neither four times the concurrency nor old enough).
    expect(planStatement(at({ pending: 32, inflight: 1, claiming: 32, now: 1_000 + SETTLE_WAIT_MS - 1 }))).toBeUndefined();
    expect(settleDueAt(at({ pending: 32, inflight: 1 }))).toBe(1_000 + SETTLE_WAIT_MS);
  });

  it("sends a held batch on its own once it has waited SETTLE_WAIT_MS", () => {
    expect(planStatement(at({ pending: 32, inflight: 1, claiming: 32, now: 1_000 + SETTLE_WAIT_MS }))).toEqual({ settle: true, claim: 0 });
  });

  it("sends a batch of four times the concurrency at once, after the claim beside it", () => {
    expect(planStatement(at({ pending: 128, want: 32 }))).toEqual({ settle: false, claim: 32 });
    expect(planStatement(at({ pending: 128, inflight: 1, claiming: 32 }))).toEqual({ settle: true, claim: 0 });
  });

  it("sends a held batch when no claim is out or wanted: nothing else would carry it", () => {
    expect(planStatement(at({ pending: 20 }))).toEqual({ settle: true, claim: 0 });
  });

  it("keeps one settle-only statement out at a time, and claims beside it", () => {
    expect(planStatement(at({ pending: 64, settling: 1, inflight: 1, want: 32 }))).toEqual({ settle: false, claim: 32 });
    expect(settleDueAt(at({ pending: 64, settling: 1, inflight: 1 }))).toBeUndefined();
  });

  it("sends nothing beside a statement in flight for less than a quarter of the concurrency", () => {
    expect(planStatement(at({ pending: 2, inflight: 1, want: 3 }))).toBeUndefined();
    expect(planStatement(at({ want: 7, inflight: 1 }))).toBeUndefined();
    expect(planStatement(at({ want: 8, inflight: 1 }))).toEqual({ settle: false, claim: 8 });
  });

  it("beside a claim in flight, claims a quarter of the slots, or half of them when claims go through the admission", () => {
    const beside = (admitted: boolean, want: number) => planStatement(at({ inflight: 1, claiming: 32 - want, want, pipelineMin: pipelineMinFor(32, admitted) }));
    expect(beside(false, 8)).toEqual({ settle: false, claim: 8 });
    expect(beside(true, 8)).toBeUndefined();
    expect(beside(true, 15)).toBeUndefined();
    expect(beside(true, 16)).toEqual({ settle: false, claim: 16 });
    // Never more than the slots, never less than one.
    expect([pipelineMinFor(1, true), pipelineMinFor(1, false), pipelineMinFor(3, true), pipelineMinFor(10, false)]).toEqual([1, 1, 2, 3]);
  });
});
