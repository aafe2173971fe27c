import { sqlState } from "../db.js";
import { errorText } from "../error-text.js";
import type { Logger } from "../log.js";
import type { StepInput, StepResult } from "../store/tick/step.js";
import type { SlotStep } from "../store/tick/slot.js";
import { addCounts } from "./counts.js";
import { plainSettlement, type Settlement, settledLate, settlementBytes, splitSettlements } from "./settlement.js";


/** A deadlock or serialization failure: the same statement may succeed when sent again. */
const transient = (e: unknown) => ["40001", "40P01"].includes(sqlState(e) ?? "");

/**
 * A value the server refused (data exception, integrity, a program limit): one
 * settlement's content may be at fault, so the batch is retried one by one.
 * A connection or timeout failure is not: the database is out of reach.
 */
const refusedValue = (e: unknown) => /^(22|23|54)/.test(sqlState(e) ?? "");

export type Send = (input: StepInput) => Promise<StepResult>;

const holdOf = (slot: SlotStep | undefined): SlotStep | undefined =>
  slot && slot.mode !== "take" ? { mode: "hold", slot: slot.slot, owner: slot.owner, leaseMs: 0 } : undefined;

const merge = (a: StepResult, b: StepResult): StepResult => ({
  claimed: [...a.claimed, ...b.claimed],
  completed: [...a.completed, ...b.completed],
  retried: [...a.retried, ...b.retried],
  deadLettered: [...a.deadLettered, ...b.deadLettered],
  requeued: [...a.requeued, ...b.requeued],
  requeueExhausted: [...a.requeueExhausted, ...b.requeueExhausted],
  reclaimed: [...a.reclaimed, ...b.reclaimed],
  reclaimExhausted: [...a.reclaimExhausted, ...b.reclaimExhausted],
  reclaimedNames: { ...a.reclaimedNames, ...b.reclaimedNames },
  unclaimed: [...a.unclaimed, ...b.unclaimed],
  unclaimedTokens: [...a.unclaimedTokens, ...b.unclaimedTokens],
  counts: addCounts(a.counts, b.counts),
  tick: b.tick ?? a.tick,
  slotFree: a.slotFree || b.slotFree,
  schemaAt: a.schemaAt ?? b.schemaAt,
  spawn: [...a.spawn, ...b.spawn],
  keyedWaiting: b.keyedWaiting ?? a.keyedWaiting,
  dispatchedTo: b.dispatchedTo ?? a.dispatchedTo,
  flowCursor: b.flowCursor ?? a.flowCursor,
  flowHeld: a.flowHeld + b.flowHeld,
  flowRetryAt: b.flowRetryAt ?? a.flowRetryAt,
  queueMinute: b.queueMinute ?? a.queueMinute,
  housekeeping: b.housekeeping ?? a.housekeeping,
  metered: [...a.metered, ...b.metered],
  probe: { ...a.probe, ...b.probe },
});

/**
 * Sends one step: the settlements of `settlements` plus the rest of `input`.
 * A deadlock is retried once. When the server refuses a value, the settlements
 * are sent one by one, so one bad settlement cannot hold back the healthy ones:
 * a settlement refused alone is sent again with plain texts, and dropped (its
 * lease expires and it is reclaimed) if even that fails. Then the rest of the
 * step is sent without them. Other failures are thrown.
 */
export const settle = async (send: Send, input: StepInput, owed: readonly Settlement[], logger: Logger): Promise<StepResult> => {
  const parts = byBytes(owed, MAX_SETTLE_BYTES);
  if (parts.length === 1) return settleOnce(send, input, owed, logger);
  // A batch too large for one request: its first parts go on statements of their own, the rest with the step.
  let result: StepResult | undefined;
  const hold = holdOf(input.slot);
  for (const part of parts.slice(0, -1)) {
    const one = await settleOnce(send, { slot: hold, history: input.history }, part, logger);
    result = result ? merge(result, one) : one;
  }
  const rest = await settleOnce(send, writingSlot(input), parts.at(-1)!, logger);
  return merge(result!, rest);
};

/**
 * The most a statement's settlements may add to it. Neon's HTTP endpoint takes 10 MiB a request;
 * the bound counts UTF-8 before JSON escapes the texts, so it leaves room for them. 128 runs at
 * the caps of output, logs and stack (64 KiB, 16 KiB, 16,000 characters) made a 42 MiB statement.
 */
export const MAX_SETTLE_BYTES = 4 * 1024 * 1024;

/** Settlements in order, in parts of at most `max` bytes each (a part of one may be larger). */
export const byBytes = (settlements: readonly Settlement[], max: number): Settlement[][] => {
  const parts: Settlement[][] = [[]];
  let bytes = 0;
  for (const s of settlements) {
    const size = settlementBytes(s);
    if (bytes + size > max && parts.at(-1)!.length > 0) (parts.push([]), (bytes = 0));
    parts.at(-1)!.push(s);
    bytes += size;
  }
  return parts;
};

/** The step's input, writing its slot row: the parts before it held the slot without the step's counts. */
const writingSlot = (input: StepInput): StepInput =>
  input.slot?.mode === "hold" && input.slot.write === false ? { ...input, slot: { ...input.slot, write: true } } : input;

const settleOnce = async (send: Send, input: StepInput, owed: readonly Settlement[], logger: Logger): Promise<StepResult> => {
  const now = Date.now();
  const settlements = owed.map((s) => settledLate(s, now));
  const whole = { ...input, ...splitSettlements(settlements) };
  try {
    return await send(whole);
  } catch (error) {
    if (transient(error)) return send(whole);
    if (!refusedValue(error) || settlements.length === 0) throw error;
    logger.log("error", "settle statement refused a value; settling one by one", { error: errorText(error), count: settlements.length });
  }
  let result: StepResult | undefined;
  const hold = holdOf(input.slot);
  for (const s of settlements) {
    let one: StepResult;
    try {
      one = await send({ ...splitSettlements([s]), slot: hold, history: input.history });
    } catch (error) {
      if (!refusedValue(error)) throw error;
      try {
        one = await send({ ...splitSettlements([plainSettlement(s, `SQLSTATE ${sqlState(error)}`)]), slot: hold, history: input.history });
      } catch (again) {
        if (!refusedValue(again)) throw again;
        logger.log("error", "settlement could not be written; the lease will expire and the job be reclaimed", {
          jobId: s.item.id, jobName: s.run.row.job_name, error: errorText(again),
        });
        continue;
      }
    }
    result = result ? merge(result, one) : one;
  }
  // Each part writes the slot row, so the merged result's row holds the whole step's counts.
  const rest = await send(writingSlot(input));
  return result ? merge(result, rest) : rest;
};
