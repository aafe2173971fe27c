// What flow control costs when it does not bind: the same drain with no limits, with a
// per-key concurrency limit far above what runs, and with a per-key rate limit far above
// the drain's rate (keys spread over 100 values). The claim's admission (flow_admit) then
// does all its work (locking buckets, counting their running jobs, writing rate windows) and
// never holds a job back.
import { tablesFor } from "../../src/store/shared/tables.js";
import type { BenchServer } from "../server.js";
import { ours } from "../systems/ours.js";
import type { DrainSystem } from "../systems/system.js";
import { measureKeyedClaim, type KeyedClaim } from "./flow-claim.js";
import { CONCURRENCY_LIMIT, concurrencyLimited, FLOW_KEYS, RATE_LIMIT, rateLimited } from "./flow-jobs.js";
import { drainVariants, type VariantRow } from "./variants.js";

export interface FlowResult {
  readonly n: number;
  readonly concurrency: number;
  readonly rounds: number;
  /** No limits first; `vsFirst` is the ratio to it. */
  readonly rows: VariantRow[];
  /** The most starts a rate bucket kept after a drain (the limit binds only when it reaches RATE_LIMIT.limit). */
  readonly peakRateStarts: number;
  readonly claim: KeyedClaim;
}

const { flow: flowTable, queue: queueTable } = tablesFor("jobs_");

export const measureFlow = async (
  server: BenchServer,
  tag: string,
  plan: { readonly n: number; readonly concurrency: number; readonly rounds: number; readonly chunk: number; readonly claimLevels: readonly number[]; readonly claimSamples: number },
  progress: (line: string) => void,
): Promise<FlowResult> => {
  const systems: DrainSystem[] = [];
  const make = async (key: string, variant: string, job?: typeof concurrencyLimited) => {
    const database = `bench_${tag}_flow_${key}`;
    const system = await ours(await server.createDatabase(database), database, { job, variant });
    systems.push(system);
    return system;
  };
  let peakRateStarts = 0;
  try {
    const none = await make("none", "no limits");
    const conc = await make("concurrency", `concurrency ${CONCURRENCY_LIMIT.toLocaleString("en-US")} per key, ${FLOW_KEYS} keys`, concurrencyLimited);
    const rate = await make("rate", `rate ${RATE_LIMIT.limit.toLocaleString("en-US")} per ${RATE_LIMIT.periodMs / 1000} s per key, ${FLOW_KEYS} keys`, rateLimited);
    // Every rate key got its bucket (the keyed path ran); a concurrency bucket is its running jobs, none left.
    const buckets = async (system: DrainSystem, kind: "r") =>
      (
        await server.admin<{ n: number; starts: number }>(
          system.database,
          `SELECT count(*)::int AS n, coalesce(max(cardinality(starts)), 0)::int AS starts
           FROM ${flowTable} WHERE bucket LIKE $1`,
          [`${kind}:%`],
        )
      )[0]!;
    const rows = await drainVariants(
      server,
      [
        { key: "none", system: none },
        {
          key: "concurrency",
          system: conc,
          async check() {
            const [left] = await server.admin<{ n: number }>(conc.database, `SELECT count(*)::int AS n FROM ${queueTable} WHERE status = 'running' OR flow_key IS NULL`);
            if (left!.n !== 0) throw new Error(`flow concurrency: ${left!.n} jobs running or unkeyed after the drain`);
          },
        },
        {
          key: "rate",
          system: rate,
          async check() {
            const b = await buckets(rate, "r");
            if (b.n !== FLOW_KEYS) throw new Error(`flow rate: ${b.n} buckets after the drain`);
            peakRateStarts = Math.max(peakRateStarts, b.starts);
            if (b.starts >= RATE_LIMIT.limit) throw new Error(`flow rate: a bucket reached its limit (${b.starts} starts): the limit bound`);
          },
        },
      ],
      plan,
      progress,
      "flow",
    );
    for (const s of systems.splice(0)) await s.close();
    const claim = await measureKeyedClaim(server, tag, { levels: plan.claimLevels, samples: plan.claimSamples }, progress);
    return { n: plan.n, concurrency: plan.concurrency, rounds: plan.rounds, rows, peakRateStarts, claim };
  } finally {
    for (const s of systems) await s.close();
  }
};
