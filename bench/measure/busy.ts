// Enqueue → handler start while one long job keeps a tick busy (its other slots free): the
// running tick must still start new jobs promptly. Woken: an enqueue through this process's
// queue, which wakes its running ticks, then `jobs.wake()`, as the platform entry points do before
// they would start a tick (a kick only when no running tick here had room). Not woken (enqueued elsewhere): the running tick claims
// again every JOBS_CLAIM_INTERVAL.
import pg from "pg";
import { z } from "zod";
import { createJobs, defineJob, type Handoff, silentLogger, type TickReport } from "../../src/index.js";
import { enqueueMany } from "../../src/enqueue.js";
import type { Latency } from "../report.js";
import { percentile, round } from "../stats.js";

export interface BusyLatency {
  readonly longJobMs: number;
  readonly claimIntervalMs: number;
  readonly woken: Latency;
  /** Enqueues after which `wake()` found no running tick with room, so a tick was kicked. */
  readonly kicks: number;
  readonly notWoken: Latency;
  /** Short jobs the busy tick itself claimed, of all enqueued. */
  readonly claimedByBusyTick: number;
  readonly probes: number;
  /** Ticks started besides the busy one (kicks, fan-out). */
  readonly otherTicks: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const summary = (xs: readonly number[]): Latency => ({
  p50Ms: round(percentile(xs, 50), 2),
  p95Ms: round(percentile(xs, 95), 2),
  p99Ms: round(percentile(xs, 99), 2),
  samples: xs.length,
});

export const measureBusyLatency = async (
  url: string,
  plan: { readonly longJobMs: number; readonly woken: number; readonly notWoken: number },
  progress: (line: string) => void,
): Promise<BusyLatency> => {
  const pool = new pg.Pool({ connectionString: url, max: 6 });
  pool.on("error", () => {});
  let longStarted!: () => void;
  const longRunning = new Promise<void>((resolve) => (longStarted = resolve));
  const started = new Map<number, (at: number) => void>();
  const long = defineJob({ name: "long", schema: z.object({}), handler: async () => (longStarted(), await sleep(plan.longJobMs)) });
  const probe = defineJob({ name: "probe", schema: z.object({ k: z.number() }), handler: (p) => started.get(p.k)?.(performance.now()) });
  const jobs = createJobs({ db: pool, jobs: [long, probe], logger: silentLogger });
  await jobs.migrate();
  const claimIntervalMs = jobs.settings.claimIntervalMs;
  const others: Promise<TickReport>[] = [];
  const spawn = (handoffs: readonly Handoff[]) => handoffs.forEach((handoff) => others.push(jobs.tick({ handoff, spawn })));
  try {
    await jobs.enqueue("long", {});
    const busyStarted = performance.now();
    const busy = jobs.tick({ spawn });
    await longRunning;
    const longEnds = busyStarted + plan.longJobMs;
    let key = 0;
    let kicks = 0;
    const once = async (wake: boolean): Promise<number> => {
      const k = key++;
      const handlerStarted = new Promise<number>((resolve) => started.set(k, resolve));
      const sent = performance.now();
      // An enqueue through this process's queue wakes its running ticks itself; one made elsewhere (another
      // process, a database trigger) is the same insert without that.
      if (wake) await jobs.enqueue("probe", { k });
      else await enqueueMany(jobs.db, jobs.tables, jobs.registry, jobs.settings, [{ job: "probe", payload: { k } }], false);
      if (wake && !jobs.wake()) {
        kicks++;
        others.push(jobs.tick({ spawn }));
      }
      const at = await handlerStarted;
      started.delete(k);
      return at - sent;
    };
    for (let i = 0; i < 5; i++) await once(true); // warm the connections and plans
    const woken: number[] = [];
    for (let i = 0; i < plan.woken; i++) woken.push(await once(true));
    // Not woken: enqueues at random moments of the claim interval, while the long job still runs.
    const notWoken: number[] = [];
    while (notWoken.length < plan.notWoken && performance.now() + 2 * claimIntervalMs + 500 < longEnds) {
      await sleep(Math.random() * claimIntervalMs);
      notWoken.push(await once(false));
    }
    const report = await busy;
    const otherReports = await Promise.all(others);
    const result: BusyLatency = {
      longJobMs: plan.longJobMs,
      claimIntervalMs,
      woken: summary(woken),
      kicks,
      notWoken: summary(notWoken),
      claimedByBusyTick: report.claimed - 1,
      probes: key,
      otherTicks: otherReports.length,
    };
    if (report.succeeded !== report.claimed) throw new Error(`busy tick: ${report.claimed} claimed, ${report.succeeded} succeeded`);
    progress(
      `busy tick  new jobs start p50 ${result.woken.p50Ms} ms woken, ${result.notWoken.p50Ms} ms not woken (claim interval ${claimIntervalMs} ms); ` +
        `${result.claimedByBusyTick} of ${key} claimed by the busy tick, ${kicks} kicks`,
    );
    return result;
  } finally {
    await pool.end();
  }
};
