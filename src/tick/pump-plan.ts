/** The longest a batch of settlements waits for more before it goes out on a statement of its own. */
export const SETTLE_WAIT_MS = 10;

/**
 * The fewest slots a second statement goes out for beside one in flight: a quarter of the
 * concurrency, or half of it when claims go through the admission (some job has limits). An
 * admitted claim costs the server about twice an unkeyed one's fixed cost (its admission looks up
 * keys, locks their buckets and counts them), so claims of a quarter of the slots paid that too
 * often: with limits that never bind, drains at concurrency 32 went from 0.66-0.73x of the same
 * drain without limits to 0.71-0.75x (three interleaved `npm run bench` flow sections each).
 */
export const pipelineMinFor = (concurrency: number, admitted: boolean): number => Math.max(1, Math.ceil(concurrency / (admitted ? 2 : 4)));

/** What the loop knows when it may send a statement (counts of settlements and slots). */
export interface PumpState {
  /** Settlements owed, and when the oldest of them finished. */
  readonly pending: number;
  readonly pendingSince: number;
  /** Statements out that settle and claim nothing, and statements out at all. */
  readonly settling: number;
  readonly inflight: number;
  readonly maxInFlight: number;
  /** Slots a claim would take now (0: none free, nothing due, or past the cutoff), and slots being claimed. */
  readonly want: number;
  readonly claiming: number;
  readonly now: number;
  /** A second statement goes out beside one in flight only for at least this much (a quarter of the concurrency). */
  readonly pipelineMin: number;
  /** A batch of settlements this large goes out at once (four times the concurrency). */
  readonly settleBatch: number;
}

/** The next statement: whether it carries the owed settlements, and how many slots it claims. */
export interface PumpPlan {
  readonly settle: boolean;
  readonly claim: number;
}

/** A batch worth a statement of its own: only with two connections, where it can go beside a claim. */
const held = (s: Pick<PumpState, "maxInFlight" | "pending" | "pipelineMin">): boolean => s.maxInFlight > 1 && s.pending >= s.pipelineMin;

/**
 * The next statement to send, or undefined for none now. With two connections, a worthwhile
 * batch of settlements goes out on a statement of its own (one such at a time) and claims go
 * without them: the two touch different rows, so the server runs them side by side, and claimed
 * runs start without waiting for the settling of the runs before. Such a batch is held until it
 * is `settleBatch`, has waited SETTLE_WAIT_MS, or no claim is out or wanted: a settle's fixed cost
 * is about half of a 32-run one's, so fewer, larger ones leave the server more time for claims.
 * With both connections free the claim goes first, the settle right after: the claim is what the
 * next runs wait for. Smaller batches ride in the next claim, as everything does on one connection.
 */
export const planStatement = (s: PumpState): PumpPlan | undefined => {
  const batch = held(s);
  const apart = batch && s.settling === 0 && (s.pending >= s.settleBatch || (s.want === 0 && s.claiming === 0) || s.now >= s.pendingSince + SETTLE_WAIT_MS);
  const claimFirst = apart && s.want > 0 && s.inflight === 0;
  const settle = !claimFirst && (apart || (s.settling === 0 && !batch));
  const claim = claimFirst ? s.want : apart ? 0 : s.want;
  const settlements = settle ? s.pending : 0;
  if (settlements === 0 && claim === 0) return undefined;
  if (s.inflight > 0 && settlements + claim < s.pipelineMin) return undefined;
  return { settle: settle && settlements > 0, claim };
};

/** When a held batch of settlements is due to go out by itself, if one is held and could go (else undefined). */
export const settleDueAt = (s: Omit<PumpState, "want" | "claiming" | "now" | "settleBatch">): number | undefined =>
  held(s) && s.inflight < s.maxInFlight && s.settling === 0 ? s.pendingSince + SETTLE_WAIT_MS : undefined;
