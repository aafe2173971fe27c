// Drain throughput, statements per job and bulk-enqueue rate, for every system
// in the same run: repetitions interleave the systems (and rotate their order),
// so slow drift of a noisy machine hits all of them alike.
import { driverCount, serverCounter } from "../counting.js";
import type { BenchServer } from "../server.js";
import type { DrainSystem, SystemName } from "../systems/system.js";

export interface DrainSample {
  readonly system: SystemName;
  readonly variant: string;
  readonly recommended: boolean;
  readonly concurrency: number;
  readonly run: number;
  readonly drainMs: number;
  readonly ticks: number | null;
  readonly fillMs: number;
  /** Counted at the driver: everything the process sent while draining. */
  readonly driverStatements: number;
  /** Counted by pg_stat_statements in the system's database; null without it. */
  readonly serverStatements: number | null;
}

export interface DrainPlan {
  readonly n: number;
  readonly runs: number;
  readonly chunk: number;
  readonly concurrency: readonly number[];
}

const rotate = <T>(xs: readonly T[], by: number): T[] => xs.map((_, i) => xs[(i + by) % xs.length]!);

export const measureDrains = async (
  server: BenchServer,
  systems: readonly DrainSystem[],
  plan: DrainPlan,
  progress: (line: string) => void,
): Promise<DrainSample[]> => {
  const samples: DrainSample[] = [];
  for (let run = 0; run < plan.runs; run++) {
    for (const [ci, concurrency] of plan.concurrency.entries()) {
      for (const system of rotate(systems, run + ci)) {
        const counter = serverCounter(server, system.database);
        const fillStarted = performance.now();
        await system.fill(plan.n, plan.chunk);
        const fillMs = performance.now() - fillStarted;
        // Every system starts from freshly vacuumed tables and statistics (not timed).
        await server.admin(system.database, "VACUUM (ANALYZE)");
        await counter.reset();
        const before = driverCount();
        const { ms: drainMs, ticks } = await system.drain(plan.n, concurrency);
        const driverStatements = driverCount() - before;
        const serverStatements = await counter.read();
        const left = await system.remaining();
        if (left !== 0) throw new Error(`${system.name}: ${left} jobs left after draining ${plan.n} at concurrency ${concurrency}`);
        await system.reset();
        samples.push({ system: system.name, variant: system.variant, recommended: system.recommended, concurrency, run, drainMs, ticks: ticks ?? null, fillMs, driverStatements, serverStatements });
        progress(
          `run ${run + 1}/${plan.runs}  c=${String(concurrency).padEnd(3)} ${`${system.name} (${system.variant})`.padEnd(46)} ` +
            `${Math.round(plan.n / (drainMs / 1000)).toString().padStart(7)} jobs/s  ` +
            `${(driverStatements / plan.n).toFixed(3)} stmt/job  fill ${Math.round(plan.n / (fillMs / 1000))} jobs/s`,
        );
      }
    }
  }
  return samples;
};
