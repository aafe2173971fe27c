import type { Logger } from "../log.js";
import type { StepInput, StepResult } from "../store/tick/step.js";

/**
 * What the tick's statements whose answers were lost may have taken: the jobs of their claims (under
 * tokens no run holds) and, for a statement that would take its slot, that slot. Every statement the
 * tick sends gives them back (store/tick/unclaim.ts) until one of them succeeds. Giving back twice
 * changes nothing: the tokens are this tick's own and fresh.
 */
export class LostClaims {
  private owners: string[] = [];
  private slotOwner: string | undefined;

  /** Whether something is owed back (the tick's final statement must then go out). */
  get owed(): boolean {
    return this.owners.length > 0 || this.slotOwner !== undefined;
  }

  /** `input` with what is owed back; `known` is the slot the tick knows it holds, which stays its own. */
  attach(input: StepInput, known: number | undefined): StepInput {
    return this.owed ? { ...input, unclaim: { owners: this.owners, slotOwner: this.slotOwner, keepSlot: known } } : input;
  }

  /** A statement failed: if its answer was lost (it may have committed), what it claimed and the slot it would take are owed back. */
  failed({ claim, slot }: StepInput, refused: boolean): void {
    if (refused) return;
    if (claim) this.owners = [...this.owners, claim.owner];
    if (slot?.mode === "take") this.slotOwner = slot.owner;
  }

  /** A statement succeeded: what it gave back is settled. */
  succeeded({ unclaim }: StepInput, { unclaimed }: StepResult, logger: Logger): void {
    if (!unclaim) return;
    this.owners = this.owners.filter((o) => !unclaim.owners.includes(o));
    if (unclaim.slotOwner) this.slotOwner = undefined;
    if (unclaimed.length > 0) logger.log("warn", "a claim's answer was lost: its jobs went back unstarted", { jobIds: unclaimed });
  }
}
