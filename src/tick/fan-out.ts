import { errorText } from "../error-text.js";
import type { Logger } from "../log.js";
import type { FanOut, Handoff } from "../store/tick/slot.js";

/** How long a slot reserved for a tick that was asked to start waits for it. */
export const RESERVE_MS = 30_000;
/** A tick asks for more ticks at most this often. */
const FAN_OUT_EVERY_MS = 1_000;
/** How long a tick that has ended waits for the answers to the starts it asked for: a refusal comes back in this. */
export const SPAWN_ANSWER_MS = 1_000;

type Start = (handoffs: readonly Handoff[]) => void | Promise<unknown>;

/**
 * A tick's side of fan-out: what its claims ask for (slots reserved for more ticks when a
 * claim comes back full and more is due, at most once a second) and starting those ticks
 * through the platform's own invocation path. A start that fails frees its slot (`release`,
 * fenced on the reservation's token) and ends this tick's fan-out and continuation.
 */
export class FanOutPacer {
  spawned = 0;
  private lastAt = Number.NEGATIVE_INFINITY;
  private failed = false;
  private readonly answers = new Map<Promise<void>, Handoff>();
  /** Starts whose slots were freed unanswered, at the tick's end. */
  private readonly freed = new Set<Handoff>();

  constructor(
    private readonly start: Start | undefined,
    private readonly maxTicks: number,
    private readonly concurrency: number,
    private readonly logger: Logger,
    /** Frees a reserved slot, fenced on its token: whether it was still reserved (a tick that started took it). */
    private readonly release: (handoff: Handoff) => Promise<boolean>,
  ) {}

  get enabled(): boolean {
    return this.start !== undefined && !this.failed;
  }

  /**
   * The fan-out part of a claim of `want` with `room` free slots in all (what this tick will claim
   * itself), or undefined when this tick cannot or need not ask yet.
   */
  input(want: number, room: number): FanOut | undefined {
    if (!this.enabled || Date.now() - this.lastAt < FAN_OUT_EVERY_MS) return undefined;
    this.lastAt = Date.now();
    const { maxTicks, concurrency } = this;
    const tokens = Array.from({ length: maxTicks - 1 }, () => crypto.randomUUID());
    return { maxTicks, concurrency, want, room: Math.max(room, want), bound: Math.min(10_000, concurrency * maxTicks + room), maxSpawn: maxTicks - 1, reserveMs: RESERVE_MS, tokens };
  }

  /** Starts a tick for each reserved slot. */
  spawn(handoffs: readonly Handoff[]): void {
    if (!this.start) return;
    for (const handoff of handoffs) {
      this.spawned++;
      let started: void | Promise<unknown>;
      try {
        started = this.start([handoff]);
      } catch (error) {
        void this.failedToStart(handoff, error);
        continue;
      }
      if (!started) continue;
      const answer = started.then(() => undefined, (error: unknown) => this.failedToStart(handoff, error));
      this.answers.set(answer, handoff);
      void answer.finally(() => this.answers.delete(answer));
    }
  }

  /**
   * Waits up to `ms` for the answers to the starts still out (a refused one then frees its slot while the tick can).
   * A start still unanswered then has its slot freed too: its failure would come after the tick's connection closed,
   * and the slot would wait out its reservation. A tick it did start takes any free slot. A tick that has started
   * but not answered (a Worker's call to itself answers when that tick ends) took its slot: nothing is freed, and
   * nothing said.
   */
  async answered(ms: number): Promise<void> {
    if (this.answers.size === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.allSettled([...this.answers.keys()]), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
    const unanswered = [...this.answers.values()];
    if (unanswered.length === 0) return;
    this.answers.clear();
    for (const h of unanswered) this.freed.add(h);
    const freed = await Promise.all(unanswered.map((h) => this.release(h).catch(() => false)));
    const slots = unanswered.filter((_, i) => freed[i]).map((h) => h.slot);
    if (slots.length > 0) this.logger.log("warn", "a started tick did not answer: its reserved slot is freed", { slots });
  }

  private async failedToStart(handoff: Handoff, error: unknown): Promise<void> {
    this.failed = true;
    if (this.freed.has(handoff)) return;
    this.logger.log("warn", "starting a tick failed: its reserved slot is freed, and this tick starts no more", { slot: handoff.slot, error: errorText(error) });
    try {
      await this.release(handoff);
    } catch (e) {
      this.logger.log("warn", "freeing a reserved slot failed: it expires unused", { slot: handoff.slot, error: errorText(e) });
    }
  }
}
