import { MAX_PERIOD_MS } from "../flow/define.js";
import { ratePadMs } from "../flow/spec.js";
import type { JobsSettings } from "../settings/library.js";
import type { Housekeeping } from "../store/tick/housekeeping.js";

/** Rows per table one cleanup deletes: small enough never to hold up the statement it rides on. */
const HOUSEKEEPING_BATCH = 5_000;
/** A cleanup that caught up waits this long before the next. */
const HOUSEKEEPING_EVERY_MS = 5 * 60_000;

/** A rate window unwritten for longer than the longest period a limit may have, and its padding, counts no start. */
const FLOW_STALE_MS = MAX_PERIOD_MS + ratePadMs(MAX_PERIOD_MS);

/** The retention settings as the cleanup that rides on a busy tick's final statement applies them. */
export const housekeepingFor = (s: JobsSettings): Housekeeping => ({
  historyMs: s.historyRetentionMs === false ? 0 : s.historyRetentionMs,
  metricsMs: s.metricsRetentionMs,
  ...(s.deadLetterRetentionMs === false ? {} : { deadLettersMs: s.deadLetterRetentionMs }),
  flowStaleMs: FLOW_STALE_MS,
  batch: HOUSEKEEPING_BATCH,
  everyMs: HOUSEKEEPING_EVERY_MS,
});
