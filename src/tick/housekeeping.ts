import { MAX_PERIOD_MS } from "../flow/define.js";
import { ratePadMs } from "../flow/spec.js";
import type { JobsSettings } from "../settings/library.js";
import { DEFAULT_HISTORY_RETENTION_MS } from "../terms.js";
import type { Housekeeping } from "../store/tick/housekeeping.js";

/** Rows per table one cleanup deletes: small enough never to hold up the statement it rides on. */
const HOUSEKEEPING_BATCH = 5_000;
/**
 * Of history and dead letters, twice the runs the tick claimed, up to this: a busy deployment writes
 * them faster than a batch a tick could delete (15,000 runs a 20 s tick, at 800 jobs/s), and its
 * history grew past the retention for ever. A tick's cleanup then costs in step with its own work
 * (about 2 µs a row here: 0.2 s for 100,000 beside 2M runs, well within the final statement's grace on slower
 * storage; at 50,000 a tick of 3,000 jobs/s fell behind).
 */
const HISTORY_BATCH_MAX = 100_000;
/** A cleanup that caught up waits this long before the next. */
const HOUSEKEEPING_EVERY_MS = 5 * 60_000;

/** A rate window unwritten for longer than the longest period a limit may have, and its padding, counts no start. */
const FLOW_STALE_MS = MAX_PERIOD_MS + ratePadMs(MAX_PERIOD_MS);

/** The retention settings as the cleanup that rides on a busy tick's final statement applies them, for a tick that claimed `claimed` runs. */
export const housekeepingFor = (s: JobsSettings, claimed = 0): Housekeeping => ({
  // Off records none, and what was recorded before goes at the default retention: a tick with history off
  // (a one-off drain, a release that turned it off) deleted every run at once, failures' records with them.
  historyMs: s.historyRetentionMs === false ? DEFAULT_HISTORY_RETENTION_MS : s.historyRetentionMs,
  metricsMs: s.metricsRetentionMs,
  ...(s.deadLetterRetentionMs === false ? {} : { deadLettersMs: s.deadLetterRetentionMs }),
  flowStaleMs: FLOW_STALE_MS,
  batch: HOUSEKEEPING_BATCH,
  historyBatch: Math.min(HISTORY_BATCH_MAX, Math.max(HOUSEKEEPING_BATCH, 2 * claimed)),
  everyMs: HOUSEKEEPING_EVERY_MS,
});
