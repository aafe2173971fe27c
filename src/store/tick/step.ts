import type { Db, QueryOptions } from "../../db.js";
import { claimFragment, type ClaimedRow, type ClaimInput, type DispatchPosition } from "./claim.js";
import { completeFragment, type Completion } from "./complete.js";
import { deadLetterFragment, deadLetterSink, type DeadLetter } from "./dead-letter.js";
import { dueHead, type Fragment, runsOf } from "./fragments.js";
import { saveCursorCte } from "./flow-cursor.js";
import { historySink } from "./history.js";
import { type Housekeeping, housekeepingColumn, housekeepingCtes } from "./housekeeping.js";
import { meterColumn, metricsCte, type MeterRow } from "./metrics.js";
import { QUEUE_MINUTE_COLUMN, queueMinuteCte } from "./queue-minute.js";
import { reclaimFragment } from "./reclaim.js";
import { type CutShort, requeueFragment, type Requeue } from "./requeue.js";
import { retryFragment, type Retry } from "./retry.js";
import { Params, type Tables } from "../shared/tables.js";
import { type Unclaim, UNCLAIMED_TOKENS, unclaimCtes } from "./unclaim.js";
import { type FanOut, fanOutCtes, type Handoff, schemaAt, slotGate, slotRowCte, type SlotStep, type TickCounts, type TickRow, ZERO_COUNTS } from "./slot.js";

export type { TickCounts } from "./slot.js";

export interface StepInput {
  readonly complete?: readonly Completion[];
  readonly retry?: readonly Retry[];
  readonly deadLetter?: readonly DeadLetter[];
  readonly requeue?: readonly Requeue[];
  /** Why the runs in `requeue` were cut short (default: the deadline): what their error says. */
  readonly cutShort?: CutShort;
  readonly reclaim?: { readonly limit: number };
  /** Gives back what statements whose answers were lost may have claimed (see unclaim.ts). */
  readonly unclaim?: Unclaim;
  readonly claim?: ClaimInput;
  /** What this statement does with the tick's slot (absent: no slot, e.g. a late settlement). */
  readonly slot?: SlotStep;
  /** With a claim: reserve slots for extra ticks when the claim was full and more is due. */
  readonly fanOut?: FanOut;
  /** Records that a tick started (the first statement of every tick does, idle or not), and the minute's queue depth. */
  readonly markTick?: boolean;
  /** Every run this statement ends gets a history row. */
  readonly history?: boolean;
  /** Cleans up old rows (the final statement of a busy tick). */
  readonly housekeeping?: Housekeeping;
  /** Saves where the tick's round-robin over keys ended, for the next tick (its final statement). */
  readonly flowCursor?: string;
  /** Extra `expression AS name` columns read in the same statement (tick extensions' probes). */
  readonly probe?: readonly string[];
  /**
   * The metrics of the runs this statement ends: written with those `carried` from earlier
   * statements (the default), or, with `later`, returned in `metered` for a later one to write.
   */
  readonly meter?: { readonly later?: boolean; readonly carried?: readonly MeterRow[] };
}

/** Per id, what the statement did; a settlement whose id is in none of these lists was refused by the fence. */
export interface StepResult {
  readonly claimed: ClaimedRow[];
  readonly completed: string[];
  readonly retried: string[];
  readonly deadLettered: string[];
  readonly requeued: string[];
  readonly requeueExhausted: string[];
  readonly reclaimed: string[];
  readonly reclaimExhausted: string[];
  /** The job names of the reclaimed jobs, by id (for their log lines and the observer). */
  readonly reclaimedNames: Readonly<Record<string, string>>;
  /** Jobs of claims whose answers were lost, given back unstarted. */
  readonly unclaimed: string[];
  /** The tokens of `unclaim` whose jobs or slots this statement found and gave back. */
  readonly unclaimedTokens: string[];
  /** This statement's own counts. */
  readonly counts: TickCounts;
  /** The tick's slot row after this statement (its counts are the tick's so far); null when it holds none. */
  readonly tick: TickRow | null;
  /** Take: whether a slot was free (or handed over); false means the cap is reached. */
  readonly slotFree: boolean;
  /** Take with `needs`: the migration the tables are at (below `needs`, no slot was taken); else null. */
  readonly schemaAt: number | null;
  /** Slots reserved for extra ticks, with the tokens they take them with. */
  readonly spawn: Handoff[];
  /** Whether the claim saw keyed jobs queued (null: it left the admission out, or did not claim). */
  readonly keyedWaiting: boolean | null;
  /** Where this statement's unkeyed claim ended in dispatch order (null when it claimed no unkeyed job). */
  readonly dispatchedTo: DispatchPosition | null;
  /** Where the next claim's round-robin over keys resumes (null when this statement admitted no keyed job). */
  readonly flowCursor: string | null;
  /** Due jobs the claim's limits held back, and when a rate window they wait on has room again (epoch ms, this process's clock). */
  readonly flowHeld: number;
  readonly flowRetryAt: number | null;
  /** What the first statement of a minute recorded of the queue (null in the others). */
  readonly queueMinute: QueueMinute | null;
  /** What the cleanup deleted (null when it did not run). */
  readonly housekeeping: { ran: boolean; runs: number; metrics: number; flow: number; deadLetters?: number } | null;
  /** The metrics of the runs it ended, when the input said to write them later (else empty). */
  readonly metered: MeterRow[];
  /** Values of the `probe` columns, by name. */
  readonly probe: Record<string, unknown>;
}

/** The queue as a tick saw it: counts bounded at 10,000, and how long the oldest due job has waited. */
export interface QueueMinute {
  readonly due: number;
  readonly running: number;
  readonly oldestWaitMs: number | null;
}

const ID_LISTS = {
  completed: "completed",
  retried: "retried",
  deadLettered: "dead_lettered",
  requeued: "requeued",
  requeueExhausted: "requeue_exhausted",
  reclaimed: "reclaimed",
  reclaimExhausted: "reclaim_exhausted",
  unclaimed: "unclaimed",
} as const satisfies Record<
  Exclude<keyof StepResult, "claimed" | "reclaimedNames" | "unclaimedTokens" | "probe" | "counts" | "tick" | "slotFree" | "schemaAt" | "spawn" | "keyedWaiting" | "dispatchedTo" | "flowCursor" | "flowHeld" | "flowRetryAt" | "queueMinute" | "housekeeping" | "metered">,
  string
>;

const EMPTY_STEP: StepResult = {
  claimed: [], completed: [], retried: [], deadLettered: [], requeued: [],
  requeueExhausted: [], reclaimed: [], reclaimExhausted: [], reclaimedNames: {}, unclaimed: [], unclaimedTokens: [], counts: ZERO_COUNTS, tick: null, slotFree: false, schemaAt: null, spawn: [], keyedWaiting: null, dispatchedTo: null, flowCursor: null, flowHeld: 0, flowRetryAt: null,
  queueMinute: null, housekeeping: null, metered: [], probe: {},
};

const nonEmpty = <T>(xs: readonly T[] | undefined): xs is readonly T[] => xs !== undefined && xs.length > 0;

/** This statement's counts as SQL over the CTEs present: the one place they are computed. */
const countsSql = (present: ReadonlySet<string>, settling: number, p: Params, outcomes: NonNullable<Fragment["outcomes"]>): Record<keyof TickCounts, string> => {
  const count = (ctes: string[], runs = false) => {
    const from = (c: string) => (runs ? runsOf(outcomes.find((o) => o.cte === c) ?? { cte: c }) : c);
    const parts = ctes.filter((c) => present.has(c)).map((c) => `(SELECT count(*) FROM ${from(c)})`);
    return parts.length > 0 ? `(${parts.join(" + ")})::int` : "0";
  };
  // Jobs given back whose claim the tick's slot row counted already (their statement wrote it, then its answer was lost).
  const given = present.has("unclaimed") ? " - (SELECT count(*) FROM unclaimed WHERE counted)::int" : "";
  return {
    claimed: `${count(["claimed"])}${given}`,
    succeeded: count(["completed"]),
    retried: count(["retried"]),
    deadLettered: count(["dead_lettered", "requeue_exhausted", "reclaim_exhausted"]),
    requeued: count(["requeued"], true),
    leaseLost: settling > 0 ? `${p.add(settling)}::int - ${count(["completed", "retried", "dead_lettered", "requeued", "requeue_exhausted"])}` : "0",
    reclaimed: count(["reclaimed", "reclaim_exhausted"]),
  };
};

/**
 * Builds the one statement for a tick step: settle what finished, requeue what
 * is left at the deadline, reclaim expired leases, take or keep the tick's slot,
 * claim more, reserve slots for more ticks, and record metrics and the tick's
 * counts, each part present only when needed. Exported for tests and the
 * benchmark's bare-SQL baseline.
 */
export const buildStep = (t: Tables, input: StepInput): { text: string; values: unknown[] } | undefined => {
  const p = new Params();
  const fragments: Fragment[] = [];
  const claiming = input.claim !== undefined && input.claim.limit > 0 && input.slot?.mode !== "release";
  // The gate's parameters appear in the text only when it is used (PostgreSQL must see every parameter's type).
  const gate = input.slot && (claiming || input.slot.mode === "take") ? slotGate(t, p, input.slot) : { ctes: [], gate: undefined };
  if (nonEmpty(input.complete)) fragments.push(completeFragment(t, p, input.complete));
  if (nonEmpty(input.retry)) fragments.push(retryFragment(t, p, input.retry));
  if (nonEmpty(input.deadLetter)) fragments.push(deadLetterFragment(t, p, input.deadLetter));
  if (nonEmpty(input.requeue)) fragments.push(requeueFragment(t, p, { items: input.requeue, why: input.cutShort }));
  if (input.reclaim) fragments.push(reclaimFragment(t, p, input.reclaim));

  const ctes = [...gate.ctes, ...fragments.flatMap((f) => f.ctes), ...(input.unclaim ? unclaimCtes(t, p, input.unclaim) : [])];
  const deadSources = fragments.flatMap((f) => f.deadSources ?? []);
  const outcomes = fragments.flatMap((f) => f.outcomes ?? []);
  if (deadSources.length > 0) ctes.push(deadLetterSink(t.deadLetters, deadSources));
  const meterLater = input.meter?.later === true;
  const carried = meterLater ? [] : (input.meter?.carried ?? []);
  if (!meterLater && (outcomes.length > 0 || carried.length > 0)) ctes.push(metricsCte(t.metrics, p, outcomes, carried));
  if (outcomes.length > 0 && input.history) ctes.push(historySink(t.runs, outcomes));
  // Runs that end need no bookkeeping for flow control: the admission counts a bucket's running jobs.
  const claim = claiming ? claimFragment(t, p, input.claim!, gate.gate) : undefined;
  if (claim) ctes.push(...claim.ctes);
  const flowed = claim?.keyed === true;
  if (input.markTick) ctes.push(`ticked AS (UPDATE ${t.state} SET last_tick_at = now() WHERE id = 1 RETURNING 1)`, queueMinuteCte(t));
  if (input.housekeeping) ctes.push(...housekeepingCtes(t, p, input.housekeeping));
  if (input.flowCursor !== undefined) ctes.push(saveCursorCte(t, p, input.flowCursor));
  const fanning = claiming && input.fanOut !== undefined && input.slot !== undefined;
  if (fanning) {
    const own = input.slot!.mode === "take" ? "SELECT slot FROM tick_free" : p.add((input.slot as { slot: number }).slot);
    ctes.push(...fanOutCtes(t, p, input.fanOut!, own, flowed));
  }

  const present = new Set([...outcomes.map((o) => o.cte), ...(claiming ? ["claimed"] : []), ...(input.unclaim ? ["unclaimed"] : [])]);
  const settling = (input.complete?.length ?? 0) + (input.retry?.length ?? 0) + (input.deadLetter?.length ?? 0) + (input.requeue?.length ?? 0);
  const counts = countsSql(present, settling, p, outcomes);
  const handOn = (input.slot?.mode === "release" && input.slot.handoff?.for) || "all";
  const due = `${present.has("requeued") && handOn === "all" ? "EXISTS (SELECT 1 FROM requeued) OR " : ""}${dueHead(t, handOn === "unkeyed" ? "unkeyed" : "any")} IS NOT NULL`;
  const slotRows = input.slot ? slotRowCte(t, p, input.slot, counts, due, flowed ? "coalesce((SELECT sum(held) FROM flowed), 0)::int" : "0") : [];
  const slotRow = slotRows.length > 0;
  ctes.push(...slotRows);
  if (ctes.length === 0 && !input.probe?.length) return undefined;

  const columns = [
    // Claimed rows start in dispatch order (an UPDATE returns rows in whatever order it met them).
    // json, not jsonb: the rows go straight out as text, without being built as jsonb first (about a
    // quarter of a no-op step's server time at concurrency 32).
    claiming ? `(SELECT coalesce(json_agg(c ORDER BY c.priority DESC, c.run_at, c.id), '[]'::json) FROM claimed c) AS claimed` : `'[]'::json AS claimed`,
    ...Object.entries(ID_LISTS).map(([key, cte]) =>
      present.has(cte) ? `(SELECT coalesce(json_agg(id), '[]'::json) FROM ${cte}) AS "${key}"` : `'[]'::json AS "${key}"`,
    ),
    input.reclaim
      ? `(SELECT coalesce(json_object_agg(id, job_name), '{}'::json) FROM (SELECT id, job_name FROM reclaimed UNION ALL SELECT id, job_name FROM reclaim_exhausted) r) AS "reclaimedNames"`
      : `'{}'::json AS "reclaimedNames"`,
    `jsonb_build_object(${Object.entries(counts).map(([k, v]) => `'${k}', ${v}`).join(", ")}) AS counts`,
    slotRow ? `(SELECT to_jsonb(r) FROM tick_row r) AS tick` : `NULL::jsonb AS tick`,
    input.slot?.mode === "take" ? `EXISTS (SELECT 1 FROM tick_free) AS "slotFree"` : `false AS "slotFree"`,
    input.slot?.mode === "take" && input.slot.needs !== undefined ? `${schemaAt(t)}::int AS "schemaAt"` : `NULL::int AS "schemaAt"`,
    fanning
      ? `(SELECT coalesce(jsonb_agg(jsonb_build_object('slot', slot, 'token', token)), '[]'::jsonb) FROM fan_reserved) AS spawn`
      : `'[]'::jsonb AS spawn`,
    flowed ? `(SELECT waiting FROM keyed_waiting) AS "keyedWaiting"` : `NULL::boolean AS "keyedWaiting"`,
    claiming
      ? `(SELECT json_build_object('priority', priority, 'runAt', run_at, 'id', id) FROM plain1 ORDER BY -priority DESC, run_at DESC, id DESC LIMIT 1) AS "dispatchedTo"`
      : `NULL::json AS "dispatchedTo"`,
    flowed ? `(SELECT max(next_cursor) FROM flowed) AS "flowCursor"` : `NULL::text AS "flowCursor"`,
    flowed ? `coalesce((SELECT sum(held) FROM flowed), 0)::int AS "flowHeld"` : `0 AS "flowHeld"`,
    // How long until then, by the database's clock: the tick adds it to its own (the two may differ by seconds).
    flowed ? `(SELECT (extract(epoch FROM min(retry_at) - clock_timestamp()) * 1000)::float8 FROM flowed) AS "flowRetryAt"` : `NULL::float8 AS "flowRetryAt"`,
    input.markTick ? QUEUE_MINUTE_COLUMN : `NULL::jsonb AS "queueMinute"`,
    input.housekeeping ? housekeepingColumn(input.housekeeping) : `NULL::jsonb AS housekeeping`,
    meterLater ? meterColumn(outcomes) : `'[]'::json AS metered`,
    input.unclaim ? UNCLAIMED_TOKENS : `'[]'::json AS "unclaimedTokens"`,
    ...(input.probe ?? []),
  ];
  const withClause = ctes.length > 0 ? `WITH ${ctes.join(",\n")}\n` : "";
  return { text: `${withClause}SELECT ${columns.join(",\n  ")}`, values: p.values };
};

type StepRow = Omit<StepResult, "probe"> & { [probe: string]: unknown };

/** Runs one step statement (bounded by `options.timeoutMs`). A step with nothing to do sends nothing. */
export const runStep = async (db: Db, t: Tables, input: StepInput, options: QueryOptions = {}): Promise<StepResult> => {
  const statement = buildStep(t, input);
  if (!statement) return EMPTY_STEP;
  const { rows } = await db.query<StepRow>(statement.text, statement.values, { prepare: true, ...options });
  const row = rows[0];
  if (!row) return EMPTY_STEP;
  const {
    claimed, completed, retried, deadLettered, requeued, requeueExhausted, reclaimed, reclaimExhausted, reclaimedNames, unclaimed, unclaimedTokens,
    counts, tick, slotFree, schemaAt: at, spawn, keyedWaiting, dispatchedTo, flowCursor, flowHeld, flowRetryAt, queueMinute, housekeeping, metered, ...probe
  } = row;
  return {
    claimed, completed, retried, deadLettered, requeued, requeueExhausted, reclaimed, reclaimExhausted, reclaimedNames, unclaimed, unclaimedTokens, counts, tick, slotFree,
    schemaAt: at, spawn, keyedWaiting, dispatchedTo, flowCursor, flowHeld, flowRetryAt: flowRetryAt === null ? null : Date.now() + flowRetryAt, queueMinute, housekeeping, metered, probe,
  };
};
