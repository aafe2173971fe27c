import type { TickCounts } from "../store/tick/slot.js";

export const ZERO_COUNTS: TickCounts = { claimed: 0, succeeded: 0, retried: 0, deadLettered: 0, requeued: 0, leaseLost: 0, reclaimed: 0 };

/** The counts alone, out of a row that holds more (the tick's slot row). */
export const countsOf = (r: TickCounts): TickCounts => ({
  claimed: r.claimed, succeeded: r.succeeded, retried: r.retried, deadLettered: r.deadLettered,
  requeued: r.requeued, leaseLost: r.leaseLost, reclaimed: r.reclaimed,
});

export const addCounts = (a: TickCounts, b: TickCounts): TickCounts =>
  Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v + b[k as keyof TickCounts]])) as unknown as TickCounts;
