import type { Logger } from "../log.js";
import type { StepInput, StepResult } from "../store/tick/step.js";
import { neverSent, refusedByServer } from "./statement-failures.js";

/**
 * What the tick's statements whose answers were lost may have taken: the jobs of their claims (under
 * tokens no run holds), the slot a take would take and the slots a fan-out would reserve. Every
 * statement the tick sends gives them back (store/tick/unclaim.ts) until one finds them: one not
 * found may belong to a statement the server has not finished (it waits on a lock, or its cancel
 * failed), so it stays owed, to the tick's final statement. Giving back twice changes nothing: the
 * tokens are this tick's own and fresh.
 */
export class LostClaims {
  private claims: Array<{ owner: string; counted: boolean }> = [];
  private slots: string[] = [];

  /** Whether something is owed back (the tick's final statement must then go out). */
  get owed(): boolean {
    return this.claims.length > 0 || this.slots.length > 0;
  }

  /** `input` with what is owed back; `known` is the slot the tick knows it holds, which stays its own. */
  attach(input: StepInput, known: number | undefined): StepInput {
    return this.owed ? { ...input, unclaim: { claims: this.claims, slots: this.slots, keepSlot: known } } : input;
  }

  /**
   * The statement `sent` failed with `error`: if its answer was lost (it may have committed), what it claimed, took and
   * reserved is owed back. One the server refused, or that never reached it, did nothing.
   */
  failed({ claim, slot, fanOut }: StepInput, error: unknown): void {
    if (refusedByServer(error) || neverSent(error)) return;
    // Its claims were counted in the tick's slot row only if it wrote the row the tick knows (a take's row it never learned of).
    if (claim) this.claims = [...this.claims, { owner: claim.owner, counted: slot?.mode === "hold" && slot.write !== false }];
    this.slots = [...this.slots, ...(slot?.mode === "take" ? [slot.owner] : []), ...(fanOut?.tokens ?? [])];
  }

  /** A statement succeeded: what it found and gave back is settled. */
  succeeded({ unclaim }: StepInput, { unclaimed, unclaimedTokens }: StepResult, logger: Logger): void {
    if (!unclaim) return;
    this.claims = this.claims.filter((c) => !unclaimedTokens.includes(c.owner));
    this.slots = this.slots.filter((s) => !unclaimedTokens.includes(s));
    if (unclaimed.length > 0) logger.log("warn", "a claim's answer was lost: its jobs went back unstarted", { jobIds: unclaimed });
  }
}
