import type { FlowSpec } from "../flow/spec.js";
import type { ClaimFlow } from "../store/tick/claim.js";
import type { StepResult } from "../store/tick/step.js";

/**
 * Keys one claim looks at: as many as it has slots (one due job per key fills it), at least 32 so
 * that keys held at their limits or with nothing due (delayed, debounced) leave others to find, at
 * most 50 (each key costs the claim a probe or two).
 */
const keysPerClaim = (limit: number) => Math.min(50, Math.max(32, limit));

/**
 * Which side the extra slot of the next claim of an odd number of slots goes to, across the ticks of a
 * process (a tick of one slot that claims once would otherwise always give it to the same side, and the
 * other starved while that side had jobs due); a new process starts on either, at random (set at the
 * first claim: a Worker may not draw random numbers outside a request).
 */
let oddToUnkeyed: boolean | undefined;

/** What a tick's claims tell the admission, and what each claim's result tells the next one. */
export class FlowClaims {
  /**
   * Where the round-robin over keys resumes: each claim starts after the last key the previous one
   * served; until a claim has run the admission, where the last tick's ended (stored in the database).
   */
  private cursor: string | undefined;
  /** Without limits in code, keyed jobs (of limits since removed) are looked for until a claim finds none. */
  private keyed = true;
  constructor(private readonly spec: FlowSpec | undefined) {}

  claim(limit: number): ClaimFlow {
    let unkeyedFirst = limit / 2;
    if (limit % 2 === 1) {
      oddToUnkeyed ??= Math.random() < 0.5;
      unkeyedFirst = oddToUnkeyed ? Math.ceil(unkeyedFirst) : Math.floor(unkeyedFirst);
      oddToUnkeyed = !oddToUnkeyed;
    }
    const split = this.spec?.enabled ?? false;
    return { limitsJson: this.spec?.limitsJson ?? "{}", split, unkeyedFirst, cursor: this.cursor, maxKeys: keysPerClaim(limit), keyed: this.keyed };
  }

  /** Where this tick's round-robin ended, for its final statement to store (undefined: it admitted nothing keyed). */
  get resumeAt(): string | undefined {
    return this.cursor;
  }

  saw(result: Pick<StepResult, "flowCursor" | "keyedWaiting">): void {
    if (result.flowCursor !== null) this.cursor = result.flowCursor;
    if (result.keyedWaiting !== null) this.keyed = result.keyedWaiting;
  }
}
