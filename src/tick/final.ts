import type { Logger } from "../log.js";
import type { JobsSettings } from "../settings/library.js";
import { CUT_SHORT, type CutShort } from "../store/tick/requeue.js";
import type { HandOn } from "../store/tick/slot.js";
import type { StepInput } from "../store/tick/step.js";
import { RESERVE_MS } from "./fan-out.js";
import { housekeepingFor } from "./housekeeping.js";
import { type Run, TickDeadline } from "./run.js";

/**
 * Runs still going at the end are abandoned: aborted (the reason says why), and their settlements go
 * to the late settler. At the deadline or on a fault of the tick's own that is an error; a tick stopped
 * on purpose (a Ctrl-C, a shutdown) only says so.
 */
export const abandonRuns = (requeue: readonly Run[], logger: Logger, why: CutShort = "deadline"): void => {
  for (const run of requeue) {
    run.abandon();
    run.abort(new TickDeadline(CUT_SHORT[why]));
  }
  if (requeue.length === 0) return;
  logger.log(why === "stopped" ? "warn" : "error", `tick ${why}: requeueing running jobs`, { jobIds: requeue.map((r) => r.row.id), count: requeue.length });
};

/**
 * The tick's final statement: requeue what still runs, free its slot or hand it on to a new tick
 * if due work of the kind `handoff` names is left, clean up old rows when it held a slot, and store
 * where its round-robin over keys ended.
 */
export const finalInput = (
  requeue: readonly Run[],
  unstarted: readonly Run[],
  slot: { slot: number; owner: string } | undefined,
  handoff: HandOn | false,
  settings: JobsSettings,
  flowCursor?: string,
  cutShort?: CutShort,
  claimed = 0,
): StepInput => ({
  flowCursor,
  cutShort,
  requeue: [
    ...requeue.map((r) => ({ id: r.row.id, owner: r.owner, durationMs: r.elapsed(), history: { logs: r.logs?.toArray() } })),
    ...unstarted.map((r) => ({ id: r.row.id, owner: r.owner, durationMs: 0, unstarted: true })),
  ],
  slot: slot ? { mode: "release", slot: slot.slot, owner: slot.owner, handoff: handoff ? { reserveMs: RESERVE_MS, token: crypto.randomUUID(), for: handoff } : undefined } : undefined,
  housekeeping: slot ? housekeepingFor(settings, claimed) : undefined,
});
