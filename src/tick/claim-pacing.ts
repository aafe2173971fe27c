import type { HandOn } from "../store/tick/slot.js";
import type { StepResult } from "../store/tick/step.js";

/**
 * When a tick claims again, from what its claims found. A claim that came back short with
 * nothing held back means the queue looked empty: the tick claims again only at the claim
 * interval while runs go on (work enqueued elsewhere), or when woken (a kick, its own enqueue).
 * A claim short because limits held jobs back claims again when a rate window has room, at the
 * claim interval for a job held by concurrency, or as soon as runs end (their buckets have room);
 * and while runs go on, at the claim interval at the latest.
 */
export class ClaimPacing {
  private empty = false;
  private lastAt = 0;
  private after = 0;
  /** The last claim was held back by concurrency alone: only runs ending (in whichever tick runs them) free it. */
  private heldByRuns = false;
  /** When the retries this tick wrote and waits for come due, soonest first: a claim before one cannot see it. */
  private retries: number[] = [];
  /**
   * The platform refused a run what it asked (a Worker's subrequests are spent): the tick claims no more.
   * Each later run would be refused too, and go back a minute, the whole due queue in a quarter of a second.
   */
  private spent = false;
  /**
   * Woken (its own enqueue) since runs last ended: when they end, claim once more. An enqueue in the
   * handler's own transaction wakes the tick before it commits; that claim finds nothing, and the tick
   * ended when the run did, leaving the job for the next cron tick.
   */
  private recheck = false;

  constructor(private readonly intervalMs: number) {}

  /** Takes in what a claim of `want` slots found. */
  claimed(want: number, result: Pick<StepResult, "claimed" | "reclaimed" | "flowHeld" | "flowRetryAt">, now: number): void {
    const short = result.claimed.length < want && result.reclaimed.length === 0;
    this.empty = short && result.flowHeld === 0;
    this.lastAt = now;
    this.after = short && result.flowHeld > 0 ? (result.flowRetryAt ?? now + this.intervalMs) : 0;
    this.heldByRuns = short && result.flowHeld > 0 && result.flowRetryAt == null;
    // A claim at or after a retry's time saw it; one before it did not, and the tick still waits for it.
    while (this.retries.length > 0 && this.retries[0]! <= now) this.retries.shift();
    if (short && this.retries.length > 0) this.waitFor(this.retries[0]!);
  }

  /**
   * Runs ended (a statement settled them): when the last claim held jobs back, claim again now, since
   * the ended runs no longer count in their concurrency buckets (a claim in the same statement as the
   * settle did not see that yet). With none left running, a retry further off than the claim interval
   * is not waited for: a tick does not sit idle for it.
   */
  runsEnded(now: number, running: number): void {
    // The next claim decides whether what was held is still held.
    this.heldByRuns = false;
    if (this.recheck) (this.recheck = false), (this.empty = false);
    if (running === 0) this.retries = this.retries.filter((at) => at <= now + this.intervalMs);
    if (this.after > now) this.after = now;
  }

  /**
   * Jobs this tick retried come due at `times` (their backoff): work the last claim could not see. Claim
   * again at the soonest, unless a claim is due sooner, and at each of the others after it.
   */
  retriesDue(times: readonly number[]): void {
    if (times.length === 0) return;
    this.retries = [...this.retries, ...times].sort((a, b) => a - b);
    this.waitFor(this.retries[0]!);
  }

  private waitFor(at: number): void {
    if (this.empty) {
      this.empty = false;
      this.after = at;
    } else if (this.after > at) this.after = at;
  }

  /** A run was refused by the platform: nothing more is claimed, nor handed on (that call would be refused too). */
  refused(): void {
    this.spent = true;
  }

  /** New work may be due (a kick, or jobs this tick enqueued): claim at once. */
  woken(): void {
    this.empty = false;
    this.recheck = true;
  }

  /** Whether the last claim found the queue empty. */
  get queueEmpty(): boolean {
    return this.empty;
  }

  /** Whether a claim is due now, with `running` runs going on. */
  due(now: number, running: number): boolean {
    const at = this.nextAt(running);
    return at !== undefined && now >= at;
  }

  /**
   * When the next claim is due (undefined: only when woken). While runs go on, at the claim interval at
   * the latest, whatever the last claim found: work enqueued elsewhere is seen then. A rate window an
   * hour off held a running tick's claims for the hour, and new jobs waited for its runs to end.
   */
  nextAt(running: number): number | undefined {
    if (this.spent) return undefined;
    const poll = running > 0 ? this.lastAt + this.intervalMs : undefined;
    if (this.empty) return poll;
    return poll === undefined ? this.after : Math.min(this.after, poll);
  }

  /**
   * For which due jobs a new tick started now is worth it (the final statement hands the slot on if one
   * is due then), as far as the last claim says: any, when it was full or what it held back may go within
   * `horizonMs`, what a successor claims for (its budget less its claim cutoff). Held jobs that go later
   * would have it end at once and hand on again, invocation after invocation; jobs held by a concurrency
   * limit go when runs of their key end, and the ticks running those claim then. So after such a claim
   * only unkeyed jobs count, and after one that found the queue empty only jobs due in the queue (not
   * those the final statement requeues): both may have come since, their kicks finding every slot held.
   */
  handOn(now: number, horizonMs: number): HandOn | false {
    if (this.spent) return false;
    if (this.empty) return "queued";
    return this.heldByRuns || this.after >= now + horizonMs ? "unkeyed" : "all";
  }

  /**
   * Nothing more will be claimed before `cutoff` (asked once nothing runs here). Jobs held by a
   * concurrency limit alone wait for runs of other ticks to end, and those ticks claim them then.
   */
  doneBy(cutoff: number): boolean {
    return this.spent || this.empty || this.heldByRuns || this.after >= cutoff;
  }
}
