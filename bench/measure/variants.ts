// Drains of the same no-op jobs through variants of our queue (history on/off, limits or
// none), each in its own database, repetitions interleaved and the order rotated, so slow
// drift of a noisy machine hits every variant alike. Ratios are taken within a repetition.
import type { BenchServer } from "../server.js";
import { median, round } from "../stats.js";
import type { DrainSystem } from "../systems/system.js";

export interface Variant {
  readonly key: string;
  readonly system: DrainSystem;
  /** Runs after each drain, untimed: throws when the drain did not do what the variant says. */
  readonly check?: () => Promise<void>;
}

export interface VariantRow {
  readonly key: string;
  readonly label: string;
  readonly jobsPerSec: number;
  /** Median over repetitions of jobs/s over the first variant's in the same repetition. */
  readonly vsFirst: number;
  readonly runsJobsPerSec: number[];
}

export const drainVariants = async (
  server: BenchServer,
  variants: readonly Variant[],
  plan: { readonly n: number; readonly concurrency: number; readonly rounds: number; readonly chunk: number },
  progress: (line: string) => void,
  section: string,
): Promise<VariantRow[]> => {
  const rates = new Map<string, number[]>(variants.map((v) => [v.key, []]));
  for (let round = 0; round < plan.rounds; round++) {
    const order = variants.map((_, i) => variants[(i + round) % variants.length]!);
    for (const v of order) {
      await v.system.fill(plan.n, plan.chunk);
      await server.admin(v.system.database, "VACUUM (ANALYZE)");
      const { ms } = await v.system.drain(plan.n, plan.concurrency);
      const left = await v.system.remaining();
      if (left !== 0) throw new Error(`${section} ${v.key}: ${left} jobs left after draining ${plan.n}`);
      await v.check?.();
      const rate = plan.n / (ms / 1000);
      rates.get(v.key)!.push(rate);
      progress(`${section} ${round + 1}/${plan.rounds}  ${v.system.variant.padEnd(44)} ${Math.round(rate).toString().padStart(7)} jobs/s`);
    }
  }
  const first = rates.get(variants[0]!.key)!;
  return variants.map((v) => {
    const own = rates.get(v.key)!;
    return {
      key: v.key,
      label: v.system.variant,
      jobsPerSec: Math.round(median(own)),
      vsFirst: round(median(own.map((r, i) => r / first[i]!)), 2),
      runsJobsPerSec: own.map(Math.round),
    };
  });
};
