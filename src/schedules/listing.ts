import type { Db } from "../db.js";
import { JobsError } from "../errors.js";
import { MAX_NEXT_RUNS, MAX_RUNS_PER_PAGE } from "../terms.js";
import { readScheduleStates, type ScheduleStateRow } from "../store/schedules/states.js";
import { decodeCursorParts, encodeCursorParts, type Page, pageLimit } from "../store/shared/paging.js";
import type { Tables } from "../store/shared/tables.js";
import type { Schedule } from "./define.js";
import { planOccurrences } from "./plan.js";
import type { Prepared } from "./prepared.js";

/** A schedule as the API, the CLI and the dashboard show it: its definition (description e.g. "every hour at minute 0 (America/New_York)") and its state. */
export interface ScheduleInfo extends Pick<Schedule, "name" | "cron" | "timezone" | "job" | "payload" | "missed" | "description"> {
  readonly paused: boolean;
  /** The next occurrences (ISO), the first possibly overdue until a tick handles it; [] when paused. */
  readonly nextRuns: string[];
  /** When a job of this schedule was last enqueued (by an occurrence or run-now). */
  readonly lastEnqueuedAt: string | null;
  readonly lastJobId: string | null;
  /** The occurrence time of the last occurrence enqueued (run-now has none). */
  readonly lastOccurrenceAt: string | null;
}

export interface ListSchedulesQuery {
  /** How many next runs each schedule lists, 0 to 100 (default 5). */
  readonly next?: number | undefined;
  /** Schedules per page, 1 to 500 (default 50); `limit × next` may be at most 5,000. */
  readonly limit?: number | undefined;
  /** A page's `nextCursor`: the page after it. */
  readonly cursor?: string | undefined;
}

// A page bounds the next runs it computes: 5,000 schedules × 100 next runs took 31 s of CPU in one request.

const iso = (ms: number) => new Date(ms).toISOString();

export const scheduleInfo = (p: Prepared, row: ScheduleStateRow | undefined, hash: string, next: number, nowMs: number, graceMs: number): ScheduleInfo => {
  const s = p.schedule;
  const paused = row?.paused ?? false;
  let nextRuns: number[] = [];
  if (!paused && next > 0 && row && row.definition_hash === hash) {
    // A synced row knows the next occurrence not yet handled: listed once per run at it (two where a skipped time lands on another).
    // Overdue, the runs the next tick enqueues under the missed policy come first (none for an occurrence past
    // `skip`'s grace: it was listed as due, and dropped), then those after now: with no tick for hours, the
    // hours since were listed as next runs.
    const first = Number(row.next_ms);
    const at = first <= nowMs ? planOccurrences(s, first, nowMs, graceMs).occurrences : s.rule.firingsAt(first).map(() => first);
    nextRuns = [...at, ...(at.length < next ? s.rule.take(next - at.length, Math.max(first, nowMs)) : [])].slice(0, next);
  } else if (!paused && next > 0) nextRuns = s.rule.take(next, nowMs);
  return {
    name: s.name, cron: s.cron, timezone: s.timezone, job: s.job, payload: p.stored, missed: s.missed, paused,
    nextRuns: nextRuns.map(iso),
    lastEnqueuedAt: row?.last_enqueued_at ?? null,
    lastJobId: row?.last_job_id ?? null,
    lastOccurrenceAt: row?.last_occurrence_at ?? null,
    description: s.description,
  };
};

const checkQuery = (query: ListSchedulesQuery): { next: number; limit: number; after: string | undefined } => {
  const next = query.next ?? 5;
  if (!Number.isInteger(next) || next < 0 || next > MAX_NEXT_RUNS) {
    throw new JobsError("invalid_options", `next must be an integer from 0 to ${MAX_NEXT_RUNS}`, { field: "next" });
  }
  const limit = pageLimit(query.limit);
  if (limit * next > MAX_RUNS_PER_PAGE) {
    throw new JobsError("invalid_options", `limit × next must be at most ${MAX_RUNS_PER_PAGE} (ask for fewer next runs or a smaller page)`, { field: "next" });
  }
  if (query.cursor === undefined) return { next, limit, after: undefined };
  const [after] = decodeCursorParts(query.cursor, 1);
  if (typeof after !== "string") throw new JobsError("invalid_options", "cursor is not one this API returned", { field: "cursor" });
  return { next, limit, after };
};

/** The index of the first name after `after` in names sorted ascending. */
const firstAfter = (sorted: readonly Prepared[], after: string): number => {
  let [lo, hi] = [0, sorted.length];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]!.schedule.name <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/**
 * One page of the schedules in code, by name, with the stored state of that page's rows only. The
 * cursor is the last name: a schedule removed by a redeploy between two pages ends nobody's paging.
 */
export const listSchedulePage = async (
  env: { db: Db; tables: Tables; sorted: readonly Prepared[]; hashOf: ReadonlyMap<string, string>; nowMs: number; graceMs: number },
  query: ListSchedulesQuery,
): Promise<Page<ScheduleInfo>> => {
  const { next, limit, after } = checkQuery(query);
  const start = after === undefined ? 0 : firstAfter(env.sorted, after);
  const page = env.sorted.slice(start, start + limit);
  if (page.length === 0) return { items: [], nextCursor: null };
  const rows = new Map((await readScheduleStates(env.db, env.tables, page.map((p) => p.schedule.name))).map((r) => [r.name, r]));
  const items = page.map((p) => scheduleInfo(p, rows.get(p.schedule.name), env.hashOf.get(p.schedule.name)!, next, env.nowMs, env.graceMs));
  return { items, nextCursor: start + limit < env.sorted.length ? encodeCursorParts([page[page.length - 1]!.schedule.name]) : null };
};
