import type { DispatchPosition } from "../store/tick/claim.js";
import type { StepResult } from "../store/tick/step.js";

/**
 * How long a tick's claims resume where the previous one ended before one starts at the head of
 * the index again: a job placed before that position in its priority's order (enqueued with a due
 * time in the past, or passed over while another tick's claim held it) waits at most this long
 * while the claims after it are full.
 */
export const HEAD_SCAN_MS = 100;

/**
 * Where a tick's next unkeyed claim resumes. A claimed job leaves a dead entry in the dispatch
 * index until a vacuum removes it, so a claim that starts at the head steps over every job claimed
 * since the last vacuum; a claim that starts after the last job this tick claimed does not.
 */
export class DispatchHint {
  private position: DispatchPosition | undefined;
  private headAt = -Infinity;

  constructor(private readonly headScanMs = HEAD_SCAN_MS) {}

  /** Where the claim about to go resumes, or undefined: it starts at the head. */
  next(now: number): DispatchPosition | undefined {
    if (this.position === undefined || now - this.headAt >= this.headScanMs) {
      this.headAt = now;
      return undefined;
    }
    return this.position;
  }

  saw(result: Pick<StepResult, "dispatchedTo">): void {
    if (result.dispatchedTo !== null) this.position = result.dispatchedTo;
  }
}
