import type { Db } from "../db.js";
import { claimFragment, type ClaimedRow, type ClaimInput } from "./claim.js";
import { completeFragment, type Completion } from "./complete.js";
import { deadLetterFragment, deadLetterSink, type DeadLetter } from "./dead-letter.js";
import type { Fragment } from "./fragments.js";
import { metricsCte } from "./metrics.js";
import { reclaimFragment } from "./reclaim.js";
import { requeueFragment, type Requeue } from "./requeue.js";
import { retryFragment, type Retry } from "./retry.js";
import { Params, type Tables } from "./tables.js";

/** The counts a tick reports; also what the dashboard shows as the last tick. */
export interface TickCounts {
  claimed: number;
  succeeded: number;
  retried: number;
  deadLettered: number;
  requeued: number;
  leaseLost: number;
  reclaimed: number;
}

export interface StepInput {
  readonly complete?: readonly Completion[];
  readonly retry?: readonly Retry[];
  readonly deadLetter?: readonly DeadLetter[];
  readonly requeue?: readonly Requeue[];
  readonly reclaim?: { readonly limit: number };
  readonly claim?: ClaimInput;
  /** Records that a tick started (the first statement of every tick does, idle or not). */
  readonly markTick?: boolean;
  /** Extra `expression AS name` columns read in the same statement (tick extensions' probes). */
  readonly probe?: readonly string[];
  /** Records the tick's report: the counts before this statement plus what this statement does. */
  readonly report?: { readonly before: TickCounts; readonly startedAt: string; readonly durationMs: number };
}

export interface StepResult {
  readonly claimed: ClaimedRow[];
  readonly completed: string[];
  readonly retried: string[];
  readonly deadLettered: string[];
  readonly requeued: string[];
  readonly requeueExhausted: string[];
  readonly reclaimed: string[];
  readonly reclaimExhausted: string[];
  /** Values of the `probe` columns, by name. */
  readonly probe: Record<string, unknown>;
}

const ID_LISTS = {
  completed: "completed",
  retried: "retried",
  deadLettered: "dead_lettered",
  requeued: "requeued",
  requeueExhausted: "requeue_exhausted",
  reclaimed: "reclaimed",
  reclaimExhausted: "reclaim_exhausted",
} as const satisfies Record<Exclude<keyof StepResult, "claimed" | "probe">, string>;

const EMPTY: StepResult = {
  claimed: [], completed: [], retried: [], deadLettered: [], requeued: [],
  requeueExhausted: [], reclaimed: [], reclaimExhausted: [], probe: {},
};

const nonEmpty = <T>(xs: readonly T[] | undefined): xs is readonly T[] => xs !== undefined && xs.length > 0;

/**
 * Builds the one statement for a tick step: settle what finished, requeue what
 * is left at the deadline, reclaim expired leases, claim more, and record
 * metrics, each part present only when needed. Exported for tests and the
 * benchmark's bare-SQL baseline.
 */
export const buildStep = (t: Tables, input: StepInput): { text: string; values: unknown[] } | undefined => {
  const p = new Params();
  const fragments: Fragment[] = [];
  if (nonEmpty(input.complete)) fragments.push(completeFragment(t, p, input.complete));
  if (nonEmpty(input.retry)) fragments.push(retryFragment(t, p, input.retry));
  if (nonEmpty(input.deadLetter)) fragments.push(deadLetterFragment(t, p, input.deadLetter));
  if (nonEmpty(input.requeue)) fragments.push(requeueFragment(t, p, input.requeue));
  if (input.reclaim) fragments.push(reclaimFragment(t, p, input.reclaim));
  if (input.claim && input.claim.limit > 0) fragments.push(claimFragment(t, p, input.claim));

  const ctes = fragments.flatMap((f) => f.ctes);
  const deadSources = fragments.flatMap((f) => f.deadSources ?? []);
  const outcomes = fragments.flatMap((f) => f.outcomes ?? []);
  if (deadSources.length > 0) ctes.push(deadLetterSink(t.deadLetters, deadSources));
  if (outcomes.length > 0) ctes.push(metricsCte(t.metrics, outcomes));
  if (input.markTick) ctes.push(`ticked AS (UPDATE ${t.state} SET last_tick_at = now() WHERE id = 1 RETURNING 1)`);
  if (input.report) ctes.push(reportCte(t, p, input, new Set(outcomes.map((o) => o.cte))));
  if (ctes.length === 0 && !input.probe?.length) return undefined;

  const present = new Set(outcomes.map((o) => o.cte));
  const columns = [
    input.claim && input.claim.limit > 0
      ? `(SELECT coalesce(jsonb_agg(to_jsonb(c)), '[]'::jsonb) FROM claimed c) AS claimed`
      : `'[]'::jsonb AS claimed`,
    ...Object.entries(ID_LISTS).map(([key, cte]) =>
      present.has(cte) ? `(SELECT coalesce(jsonb_agg(id), '[]'::jsonb) FROM ${cte}) AS "${key}"` : `'[]'::jsonb AS "${key}"`,
    ),
  ];
  columns.push(...(input.probe ?? []));
  const withClause = ctes.length > 0 ? `WITH ${ctes.join(",\n")}\n` : "";
  return { text: `${withClause}SELECT ${columns.join(",\n  ")}`, values: p.values };
};

const reportCte = (t: Tables, p: Params, input: StepInput, present: Set<string>): string => {
  const report = input.report!;
  const count = (ctes: string[]) => {
    const parts = ctes.filter((c) => present.has(c)).map((c) => `(SELECT count(*) FROM ${c})`);
    return parts.length > 0 ? parts.join(" + ") : "0";
  };
  const settling =
    (input.complete?.length ?? 0) + (input.retry?.length ?? 0) + (input.deadLetter?.length ?? 0) + (input.requeue?.length ?? 0);
  const b = report.before;
  const fields: Record<keyof TickCounts, string> = {
    claimed: `${p.add(b.claimed)}::int + ${input.claim && input.claim.limit > 0 ? "(SELECT count(*) FROM claimed)" : "0"}`,
    succeeded: `${p.add(b.succeeded)}::int + ${count(["completed"])}`,
    retried: `${p.add(b.retried)}::int + ${count(["retried"])}`,
    deadLettered: `${p.add(b.deadLettered)}::int + ${count(["dead_lettered", "requeue_exhausted", "reclaim_exhausted"])}`,
    requeued: `${p.add(b.requeued)}::int + ${count(["requeued"])}`,
    leaseLost: `${p.add(b.leaseLost)}::int + ${p.add(settling)}::int - (${count(["completed", "retried", "dead_lettered", "requeued", "requeue_exhausted"])})`,
    reclaimed: `${p.add(b.reclaimed)}::int + ${count(["reclaimed", "reclaim_exhausted"])}`,
  };
  const object = Object.entries(fields).map(([k, v]) => `'${k}', ${v}`).join(", ");
  return `reported AS (
    UPDATE ${t.state} SET last_report_at = now(),
      last_report = jsonb_build_object(${object}, 'startedAt', ${p.add(report.startedAt)}::text, 'durationMs', ${p.add(report.durationMs)}::int)
    WHERE id = 1 RETURNING 1)`;
};

interface StepRow {
  [probe: string]: unknown;
  claimed: ClaimedRow[];
  completed: string[];
  retried: string[];
  deadLettered: string[];
  requeued: string[];
  requeueExhausted: string[];
  reclaimed: string[];
  reclaimExhausted: string[];
}

/** Runs one step statement. A step with nothing to do sends nothing. */
export const runStep = async (db: Db, t: Tables, input: StepInput): Promise<StepResult> => {
  const statement = buildStep(t, input);
  if (!statement) return EMPTY;
  const { rows } = await db.query<StepRow>(statement.text, statement.values, { prepare: true });
  const row = rows[0];
  if (!row) return EMPTY;
  const { claimed, completed, retried, deadLettered, requeued, requeueExhausted, reclaimed, reclaimExhausted, ...probe } = row;
  return { claimed, completed, retried, deadLettered, requeued, requeueExhausted, reclaimed, reclaimExhausted, probe };
};
