/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import type { FC } from "hono/jsx";
import type { Stats } from "../../store/admin/stats.js";
import { qs } from "../dashboard-context.js";
import { num, span, Time } from "../format.js";
import { Kv, type Pair, Table } from "../parts.js";

/** A count the stats may have stopped at a bound (`countIsLowerBound`): shown as `10,000+`. */
type Counted = { readonly count: number; readonly countIsLowerBound?: boolean };
const total = (rows: readonly Counted[]) => num(rows.reduce((n, r) => n + r.count, 0), rows.some((r) => r.countIsLowerBound === true));

const MINUTE = 60_000;
/** A platform cron runs every minute; this long without a tick means it is not running. */
const STALE_TICK_MS = 3 * MINUTE;

export const TickAlert: FC<{ stats: Stats }> = ({ stats }) => {
  const age = stats.lastTickAt ? Date.parse(stats.now) - Date.parse(stats.lastTickAt) : null;
  return age === null ? (
    <p class="alert" role="alert">
      No tick has run yet. Jobs run only when the platform cron calls the tick every minute.
    </p>
  ) : age > STALE_TICK_MS ? (
    <p class="alert" role="alert">
      No tick for {span(age)}: check the platform cron.
    </p>
  ) : null;
};

const Card: FC<{ id: string; n: unknown; label: string }> = ({ id, n, label }) => (
  <div class="card" id={id}>
    <div class="n">{n}</div>
    <div class="l">{label}</div>
  </div>
);

export const Cards: FC<{ base: string; stats: Stats; maxTicks: number }> = ({ base, stats, maxTicks }) => (
  <section class="grid" aria-label="Totals">
    <Card id="card-queued" n={total(stats.queue.filter((d) => d.status === "queued"))} label="queued" />
    <Card id="card-running" n={total(stats.queue.filter((d) => d.status === "running"))} label="running now" />
    <Card id="card-oldest" n={stats.oldestWaitingMs === null ? "—" : span(stats.oldestWaitingMs)} label="oldest due job has waited" />
    <Card id="card-dead" n={<a href={`${base}/dead-letters`}>{total(stats.deadLetters)}</a>} label="dead letters" />
    <Card id="card-ticks" n={`${stats.ticksRunning} of ${maxTicks}`} label="ticks running (JOBS_MAX_TICKS)" />
  </section>
);

/** Queue depth now and dead letters, per job. */
export const Tables: FC<{ base: string; stats: Stats }> = ({ base, stats }) => {
  const byJob = new Map<string, { queued: Counted[]; running: Counted[]; oldest: number | null }>();
  for (const d of stats.queue) {
    const row = byJob.get(d.job) ?? { queued: [], running: [], oldest: null };
    row[d.status].push(d);
    if (d.oldestWaitingMs !== null) row.oldest = Math.max(row.oldest ?? 0, d.oldestWaitingMs);
    byJob.set(d.job, row);
  }
  const now = Date.parse(stats.now);
  return (
    <>
      <h2>Queue</h2>
      {byJob.size === 0 ? (
        <p class="muted">The queue is empty.</p>
      ) : (
        <Table
          id="queue-depth"
          cols={[{ l: "Job" }, { l: "Queued", c: "num" }, { l: "Running", c: "num" }, { l: "Oldest due waited" }]}
          rows={[...byJob.entries()].map(([job, r]) => [
            <a href={`${base}/jobs${qs({ job })}`}>{job}</a>,
            total(r.queued),
            total(r.running),
            r.oldest === null ? "—" : span(r.oldest),
          ])}
        />
      )}
      <h2>Dead letters</h2>
      {stats.deadLetters.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <Table
          id="dead-by-job"
          cols={[{ l: "Job" }, { l: "Dead letters", c: "num" }, { l: "Latest" }]}
          rows={stats.deadLetters.map((d) => [<a href={`${base}/dead-letters${qs({ job: d.job })}`}>{d.job}</a>, total([d]), <Time iso={d.lastDeadAt} now={now} />])}
        />
      )}
    </>
  );
};

const REPORT_FIELDS: ReadonlyArray<[string, string]> = [
  ["claimed", "Claimed"],
  ["succeeded", "Succeeded"],
  ["retried", "Retried"],
  ["deadLettered", "Dead-lettered"],
  ["requeued", "Requeued at the deadline"],
  ["leaseLost", "Lease lost"],
  ["reclaimed", "Reclaimed"],
];

/** The latest tick that did work: marked while it still runs, its counts "so far" then. */
export const LastTick: FC<{ stats: Stats }> = ({ stats }) => {
  const now = Date.parse(stats.now);
  const r = stats.lastReport;
  const running = r?.inProgress === true;
  const ms = typeof r?.durationMs === "number" ? r.durationMs : null;
  return (
    <>
      <h2>
        Last tick{" "}
        {running ? (
          <span class="badge running" id="tick-in-progress">
            in progress
          </span>
        ) : null}
      </h2>
      <Kv
        id="last-tick"
        rows={[
          ["Any tick last ran", <Time iso={stats.lastTickAt} now={now} />],
          ["Last busy tick started", <Time iso={typeof r?.startedAt === "string" ? r.startedAt : stats.lastReportAt} now={now} />],
          ms !== null && [running ? "Running for" : "Took", running ? span(ms) : `${num(ms)} ms`],
          ...(r ? REPORT_FIELDS.map(([key, label]): Pair => [running ? `${label} so far` : label, String(r[key] ?? "—")]) : []),
        ]}
      />
    </>
  );
};
