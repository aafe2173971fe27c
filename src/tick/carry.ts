import { addMeterRows, type MeterRow } from "../store/tick/metrics.js";
import type { SlotStep, TickCounts } from "../store/tick/slot.js";
import type { StepInput } from "../store/tick/step.js";
import { addCounts, countsOf, ZERO_COUNTS } from "./counts.js";

/** How often a busy tick writes its slot row's counts and its runs' metrics; statements in between carry them on. */
const WRITE_EVERY_MS = 1_000;

/** What one statement takes on to write. */
export interface Carried {
  readonly counts: TickCounts;
  readonly metrics: readonly MeterRow[];
}

/**
 * What the tick's statements computed but did not write: counts that are in no slot row yet, and
 * metrics rows returned instead of written. Both come from SQL over the fenced settle CTEs, as a
 * written row would; a statement that writes takes them on (`carriedBy`), so a busy tick writes
 * its hot rows about once a second instead of once per statement, and its final statement writes
 * what is left. Lost if the process dies mid-tick, or a statement carrying them loses its answer (it may
 * have written them: they are not sent twice); the runs' history rows are written at once.
 */
export class Carry {
  private counts: TickCounts = ZERO_COUNTS;
  private metrics: MeterRow[] = [];
  // Statements out that write, and when one last came back.
  private writing = 0;
  private lastWriteAt = Number.NEGATIVE_INFINITY;

  /** Whether the next statement should write: none that writes is out, and the last one is a while ago. */
  writeDue(now: number): boolean {
    return this.writing === 0 && now - this.lastWriteAt >= WRITE_EVERY_MS;
  }

  /** Counts of a statement that wrote no slot row, with what it was carrying. */
  addCounts(counts: TickCounts, taken?: Carried) {
    this.counts = addCounts(addCounts(this.counts, counts), taken?.counts ?? ZERO_COUNTS);
  }

  addMetrics(rows: readonly MeterRow[]) {
    if (rows.length > 0) this.metrics = addMeterRows(this.metrics, rows);
  }

  /** The tick's counts: its slot row's as last written, and what no row took in yet. */
  total(row: TickCounts | null): TickCounts {
    return addCounts(row ? countsOf(row) : ZERO_COUNTS, this.counts);
  }

  get hasMetrics(): boolean {
    return this.metrics.length > 0;
  }

  /** Hands everything over to a statement that writes; `written` says when it is back. */
  take(): Carried {
    const taken = { counts: this.counts, metrics: this.metrics };
    this.counts = ZERO_COUNTS;
    this.metrics = [];
    this.writing++;
    return taken;
  }

  /** The writing statement is back; if the server refused it (so it wrote nothing), what it carried is taken back. */
  written(taken: Carried, failed: boolean) {
    this.writing--;
    this.lastWriteAt = Date.now();
    if (failed) (this.addCounts(taken.counts), this.addMetrics(taken.metrics));
  }
}

/** The input with what it carries: counts into its slot row, metrics into its metrics write. */
export const carriedBy = (input: StepInput, taken: Carried): StepInput => {
  const slot: SlotStep | undefined = input.slot ? { ...input.slot, carry: taken.counts } : undefined;
  return { ...input, slot, meter: { carried: taken.metrics } };
};

/** Whether a statement writes the metrics (and, holding its slot row, the counts), or returns them. */
export const writes = (input: StepInput): boolean => input.meter?.later !== true;
