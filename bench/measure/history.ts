// Run history on vs off: the same drain, once with the default retention (every settle
// statement also writes a history row per run) and once with `historyRetentionMs: false`.
import { tablesFor } from "../../src/store/shared/tables.js";
import type { BenchServer } from "../server.js";
import { median, round } from "../stats.js";
import { ours } from "../systems/ours.js";
import type { DrainSystem } from "../systems/system.js";
import { drainVariants, type VariantRow } from "./variants.js";

export interface HistoryResult {
  readonly n: number;
  readonly concurrency: number;
  readonly rounds: number;
  /** On first, then off; `vsFirst` of off is off/on. */
  readonly rows: VariantRow[];
  /** Median over rounds of on/off jobs/s (the goal: >= 0.8). */
  readonly onOverOff: number;
  /** History rows the last "on" drain wrote (one per run) and the "off" drains wrote (none). */
  readonly rowsWrittenOn: number;
  readonly rowsWrittenOff: number;
}

export const HISTORY_GOAL = 0.8;

const countRuns = async (server: BenchServer, system: DrainSystem, table: string) =>
  Number((await server.admin<{ n: string }>(system.database, `SELECT count(*) AS n FROM ${table}`))[0]?.n ?? 0);

export const measureHistory = async (
  server: BenchServer,
  tag: string,
  plan: { readonly n: number; readonly concurrency: number; readonly rounds: number; readonly chunk: number },
  progress: (line: string) => void,
): Promise<HistoryResult> => {
  const make = async (key: string, history: boolean, variant: string) => {
    const database = `bench_${tag}_history_${key}`;
    const settings = history ? {} : { historyRetentionMs: false as const };
    return ours(await server.createDatabase(database), database, { settings, variant });
  };
  const on = await make("on", true, "history on (default, 7 days)");
  const off = await make("off", false, "history off (historyRetentionMs: false)");
  const runsTable = tablesFor("jobs_").runs;
  const seen = { on: 0, off: 0, lastOn: 0 };
  try {
    const rows = await drainVariants(
      server,
      [
        {
          key: "on",
          system: on,
          async check() {
            const total = await countRuns(server, on, runsTable);
            seen.lastOn = total - seen.on;
            seen.on = total;
            if (seen.lastOn !== plan.n) throw new Error(`history on: ${seen.lastOn} history rows for ${plan.n} runs`);
          },
        },
        {
          key: "off",
          system: off,
          async check() {
            seen.off = await countRuns(server, off, runsTable);
            if (seen.off !== 0) throw new Error(`history off: ${seen.off} history rows written`);
          },
        },
      ],
      plan,
      progress,
      "history",
    );
    const [onRuns, offRuns] = [rows[0]!.runsJobsPerSec, rows[1]!.runsJobsPerSec];
    const onOverOff = round(median(onRuns.map((r, i) => r / offRuns[i]!)), 2);
    return { n: plan.n, concurrency: plan.concurrency, rounds: plan.rounds, rows, onOverOff, rowsWrittenOn: seen.lastOn, rowsWrittenOff: seen.off };
  } finally {
    await on.close();
    await off.close();
  }
};
