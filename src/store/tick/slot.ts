import type { Db, QueryOptions } from "../../db.js";
import type { Params, Tables } from "../shared/tables.js";

/** The counts a tick reports; its slot row keeps them, so they are computed once, in SQL. */
export interface TickCounts {
  claimed: number;
  succeeded: number;
  retried: number;
  deadLettered: number;
  requeued: number;
  leaseLost: number;
  reclaimed: number;
}

/** Each count's column in the slot row: the one list of them. */
const COUNT_COLUMNS: Record<keyof TickCounts, string> = {
  claimed: "claimed",
  succeeded: "succeeded",
  retried: "retried",
  deadLettered: "dead_lettered",
  requeued: "requeued",
  leaseLost: "lease_lost",
  reclaimed: "reclaimed",
};
const COUNT_FIELDS = Object.keys(COUNT_COLUMNS) as Array<keyof TickCounts>;

/** No counts yet. */
export const ZERO_COUNTS: Readonly<TickCounts> = Object.freeze({ claimed: 0, succeeded: 0, retried: 0, deadLettered: 0, requeued: 0, leaseLost: 0, reclaimed: 0 });

/** The counts alone, out of a row that holds more (the tick's slot row). */
export const countsOf = (r: Readonly<TickCounts>): TickCounts => {
  const c = { ...ZERO_COUNTS };
  for (const f of COUNT_FIELDS) c[f] = r[f];
  return c;
};

export const addCounts = (a: Readonly<TickCounts>, b: Readonly<TickCounts>): TickCounts => {
  const sum = { ...a };
  for (const f of COUNT_FIELDS) sum[f] = a[f] + b[f];
  return sum;
};

/** A slot another tick was asked to start in: it presents the token to take exactly that slot. */
export interface Handoff {
  readonly slot: number;
  readonly token: string;
}

/** What a step statement does with the tick's slot. */
export type SlotStep =
  /** Take a free slot (or the handed-off one) if this statement finds work; claims run only when one was free. */
  | {
      readonly mode: "take";
      readonly maxTicks: number;
      readonly owner: string;
      readonly leaseMs: number;
      readonly budgetMs: number;
      readonly handoff?: Handoff;
      /** Counts from statements this tick sent before it held a slot (a reclaim). */
      readonly carry?: Partial<TickCounts>;
      /**
       * The migration the code needs: on tables at an older one no slot is taken (nothing is claimed), and
       * the statement says where they are (`schemaAt`). A migration that only rewrote a function fails no
       * statement, so without this a release would run on the last one's admission, silently.
       */
      readonly needs?: number;
    }
  /**
   * Keep the slot: claims are fenced on still holding it; the lease follows the claims' lease.
   * `write: false` leaves the slot row alone (the counts go to a later statement's `carry`), so
   * a busy tick's statements do not queue on its row one behind the other.
   */
  | { readonly mode: "hold"; readonly slot: number; readonly owner: string; readonly leaseMs: number; readonly write?: boolean; readonly carry?: Partial<TickCounts> }
  /**
   * Free the slot, or, with `handoff`, reserve it for the next tick under `token` if due work remains. The
   * token is the tick's own: sent again after its answer was lost, the statement finds its reservation.
   */
  | {
      readonly mode: "release";
      readonly slot: number;
      readonly owner: string;
      /**
       * `for`: which due jobs are worth a new tick (default all, those this statement requeues included); `queued`:
       * those due in the queue, not those it requeues (the tick's last claim found none); `unkeyed`: unkeyed ones
       * (its last claim's keyed jobs wait for their limits, which a new tick would find closed too).
       */
      readonly handoff?: { readonly reserveMs: number; readonly token: string; readonly for?: HandOn };
      readonly carry?: Partial<TickCounts>;
    };

/** Which due jobs a final statement hands the tick's slot on for (see `SlotStep`'s release). */
export type HandOn = "all" | "queued" | "unkeyed";

/** The tick's slot row as a step returns it. */
export interface TickRow extends TickCounts {
  readonly slot: number;
  readonly owner: string | null;
  readonly reserved: boolean;
}

const ms = (p: Params, value: number) => `${p.add(Math.max(0, Math.round(value)))}::bigint * interval '1 millisecond'`;

/** CTEs that must precede the claim, and the condition the claim runs under. */
export const slotGate = (t: Tables, p: Params, step: SlotStep): { ctes: string[]; gate: string | undefined } => {
  if (step.mode === "take") {
    const hslot = p.add(step.handoff?.slot ?? null);
    const token = p.add(step.handoff?.token ?? null);
    const handed = `(reserved AND slot = ${hslot}::int AND owner = ${token}::uuid AND expires_at > now())`;
    return {
      ctes: [
        `tick_free AS (
          SELECT slot FROM ${t.ticks}
          WHERE slot <= ${p.add(step.maxTicks)}::int AND (expires_at IS NULL OR expires_at <= now() OR ${handed})${step.needs === undefined ? "" : ` AND ${schemaAt(t)} >= ${p.add(step.needs)}::int`}
          ORDER BY ${handed} DESC, slot LIMIT 1 FOR UPDATE SKIP LOCKED)`,
      ],
      gate: "EXISTS (SELECT 1 FROM tick_free)",
    };
  }
  if (step.mode === "hold") {
    return { ctes: [], gate: `EXISTS (SELECT 1 FROM ${t.ticks} WHERE slot = ${p.add(step.slot)}::int AND owner = ${p.add(step.owner)}::uuid)` };
  }
  return { ctes: [], gate: undefined };
};

/** The migration the tables are at (SQL): the newest one recorded. */
export const schemaAt = (t: Tables): string => `(SELECT max(version) FROM ${t.migrations})`;

const RETURNING = `RETURNING t.slot, t.owner::text AS owner, t.reserved, ${COUNT_FIELDS.map((f) => `t.${COUNT_COLUMNS[f]} AS "${f}"`).join(", ")}`;

/**
 * The update of the tick's slot row, after every other CTE: it adds this
 * statement's counts (SQL expressions over the settle CTEs), and those carried
 * from statements that did not write the row, to the tick's. `dueAfter` says
 * whether due work remains (for a handoff). None for a hold that does not write.
 * A tick started for a reserved slot that finds nothing to do frees the
 * reservation, so it does not count against the cap until it expires.
 */
export const slotRowCte = (
  t: Tables,
  p: Params,
  step: SlotStep,
  counts: Record<keyof TickCounts, string>,
  dueAfter: string,
  /** Due jobs held back by limits this statement: the tick keeps the slot to claim them when they may go. */
  held = "0",
): string[] => {
  const fields = COUNT_FIELDS;
  if (step.mode === "take") {
    const set = fields.map((f) => `${COUNT_COLUMNS[f]} = ${p.add(step.carry?.[f] ?? 0)}::int + ${counts[f]}`).join(", ");
    const work = `(${counts.claimed}) + (${counts.reclaimed}) + (${held}) > 0`;
    const take = `tick_row AS (
      UPDATE ${t.ticks} t SET owner = ${p.add(step.owner)}::uuid, reserved = false, expires_at = now() + ${ms(p, step.leaseMs)},
        started_at = now(), finished_at = NULL, budget_ms = ${p.add(Math.round(step.budgetMs))}::int, ${set}
      FROM tick_free f WHERE t.slot = f.slot AND ${work}
      ${RETURNING})`;
    if (!step.handoff) return [take];
    // Exclusive with the take (one needs work, the other none), so the row is updated once at most.
    const unreserve = `tick_unreserved AS (
      UPDATE ${t.ticks} t SET owner = NULL, reserved = false, expires_at = NULL
      FROM tick_free f WHERE t.slot = f.slot AND t.reserved AND t.slot = ${p.add(step.handoff.slot)}::int
        AND t.owner = ${p.add(step.handoff.token)}::uuid AND NOT (${work})
      RETURNING t.slot)`;
    return [take, unreserve];
  }
  if (step.mode === "hold" && step.write === false) return [];
  const add = fields.map((f) => `${COUNT_COLUMNS[f]} = t.${COUNT_COLUMNS[f]} + ${p.add(step.carry?.[f] ?? 0)}::int + ${counts[f]}`).join(", ");
  const fence = `t.slot = ${p.add(step.slot)}::int AND t.owner = ${p.add(step.owner)}::uuid`;
  if (step.mode === "hold") {
    return [`tick_row AS (
      UPDATE ${t.ticks} t SET ${add}, expires_at = greatest(t.expires_at, now() + ${ms(p, step.leaseMs)})
      WHERE ${fence} ${RETURNING})`];
  }
  const handoff = step.handoff ? `(${dueAfter})` : "false";
  const reserve = step.handoff ? ms(p, step.handoff.reserveMs) : "interval '0'";
  const token = p.add(step.handoff?.token ?? null);
  // Or the slot as this release reserved it, if an earlier try committed and its answer was lost.
  const mine = step.handoff ? `(${fence} OR (t.slot = ${p.add(step.slot)}::int AND t.reserved AND t.owner = ${token}::uuid))` : fence;
  return [`tick_row AS (
    UPDATE ${t.ticks} t SET ${add}, finished_at = now(), reserved = ${handoff},
      owner = CASE WHEN ${handoff} THEN ${token}::uuid END,
      expires_at = CASE WHEN ${handoff} THEN now() + ${reserve} END
    WHERE ${mine} ${RETURNING})`];
};

/** Asks for more ticks when this statement's claim was full and a bounded count says more is due. */
export interface FanOut {
  readonly maxTicks: number;
  readonly concurrency: number;
  /** The claim's limit: fan-out is considered only when the claim took all of it. */
  readonly want: number;
  /** The tick's free slots, this claim's included: due jobs it will claim itself need no other tick. */
  readonly room: number;
  /** Most due rows counted (the count never scans further). */
  readonly bound: number;
  /** Most ticks this statement asks for. */
  readonly maxSpawn: number;
  /** How long a reservation waits for its tick. */
  readonly reserveMs: number;
  /** The reservations' tokens, `maxSpawn` of them, made by the tick: it can free them if this statement's answer is lost. */
  readonly tokens: readonly string[];
}

/**
 * Reserves free slots (never the tick's own) for the extra ticks; their tokens come back in the `spawn`
 * column. What is due beyond this tick's own room, counted along the due indexes and bounded. Keyed jobs
 * do not count when the admission (`flowed`) fell short of its share holding some back: they wait for
 * their limits, not for more ticks.
 */
export const fanOutCtes = (t: Tables, p: Params, f: FanOut, ownSlot: string, flowed: boolean): string[] => {
  const want = p.add(f.want);
  const keyedHeld = flowed
    ? `(coalesce((SELECT sum(held) FROM flowed), 0) > 0 AND (SELECT count(id) FROM flowed) < greatest(0, ${want}::int - (SELECT count(*) FROM plain1)::int))`
    : "false";
  const due = (keyed: boolean) =>
    // The bound as a constant (a parameter is estimated at a tenth of the queue: a cost that grows with it), and
    // along the due index (a sequential scan would walk the dead rows a drain leaves at the start of the table).
    // Rounded up to a power of two, so that a tick's claims have few texts (each a prepared statement of its own).
    `(SELECT count(*) FROM (SELECT 1 FROM ${t.queue} WHERE status = 'queued' AND flow_key IS ${keyed ? "NOT " : ""}NULL AND run_at <= now()
      ORDER BY run_at LIMIT ${2 ** Math.ceil(Math.log2(Math.max(1, f.bound)))}) x)`;
  return [
  `fan_due AS (
    SELECT CASE WHEN (SELECT count(*) FROM claimed) >= ${want}::int
      THEN ${due(false)} + CASE WHEN ${keyedHeld} THEN 0 ELSE ${due(true)} END
           - (SELECT count(*) FROM claimed) - (${p.add(f.room)}::int - ${want}::int)
      ELSE 0 END AS more)`,
  `fan_pick AS (
    SELECT slot FROM ${t.ticks}
    WHERE slot <= ${p.add(f.maxTicks)}::int AND (expires_at IS NULL OR expires_at <= now()) AND slot NOT IN (${ownSlot})
    ORDER BY slot
    LIMIT (SELECT least(${p.add(f.maxSpawn)}::int, ceil(greatest(more, 0)::numeric / ${p.add(f.concurrency)}::int))::int FROM fan_due)
    FOR UPDATE SKIP LOCKED)`,
  `fan_reserved AS (
    UPDATE ${t.ticks} t SET owner = (${p.json(f.tokens)} ->> (f.k - 1))::uuid, reserved = true, expires_at = now() + ${ms(p, f.reserveMs)}
    FROM (SELECT slot, row_number() OVER (ORDER BY slot)::int AS k FROM fan_pick) f WHERE t.slot = f.slot
    RETURNING t.slot, t.owner::text AS token)`,
  ];
};

/** Frees a slot reserved for a tick that did not start; fenced on its token, so a tick that took it keeps it. */
export const unreserveSlot = (db: Db, t: Tables, handoff: Handoff, options: QueryOptions = {}) =>
  db.query(`UPDATE ${t.ticks} SET owner = NULL, reserved = false, expires_at = NULL WHERE slot = $1 AND owner = $2::uuid AND reserved RETURNING slot`, [handoff.slot, handoff.token], options);
