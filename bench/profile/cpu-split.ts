// Profiling aid (not part of `npm run bench`): where a drain's CPU goes on this machine, whose
// cores the client and the server share. For each system, drains of fresh databases, the CPU time
// of this process (the client) and of the rest of the machine (the server, mostly) per job.
//   npx tsx bench/profile/cpu-split.ts [n] [concurrency] [systems] [reps]
//   systems: ours, ours<batchSize> (e.g. ours32), bare, graphile; default ours,bare,graphile
import { readFileSync } from "node:fs";
import { loadPeers } from "../peers.js";
import { startServer } from "../server.js";
import { bareSql } from "../systems/bare-sql.js";
import { graphileWorker } from "../systems/graphile-worker.js";
import { ours } from "../systems/ours.js";
import type { DrainSystem } from "../systems/system.js";

/** Busy CPU seconds of the whole machine (user, nice, system, irq, softirq). */
const machineBusy = () => {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  return (f[0]! + f[1]! + f[2]! + f[5]! + f[6]!) / 100;
};

const n = Number(process.argv[2] ?? 20_000);
const concurrency = Number(process.argv[3] ?? 32);
const names = (process.argv[4] ?? "ours,bare,graphile").split(",");
const reps = Number(process.argv[5] ?? 2);

const make = async (name: string, url: string, database: string): Promise<DrainSystem> => {
  if (name === "bare") return bareSql(url, database);
  if (name === "graphile") return graphileWorker(await loadPeers(() => {}), url, database, "recommended");
  const batch = name.startsWith("ours") && name.length > 4 ? Number(name.slice(4)) : undefined;
  if (name.startsWith("ours")) return ours(url, database, batch ? { settings: { batchSize: batch } } : {});
  throw new Error(`unknown system ${name}`);
};

const server = await startServer();
try {
  for (let rep = 0; rep < reps; rep++) {
    for (const name of rep % 2 ? [...names].reverse() : names) {
      const database = `cpu_split_${name}_${rep}`;
      const system = await make(name, await server.createDatabase(database), database);
      await system.fill(n, 1_000);
      await server.admin(database, "VACUUM (ANALYZE)");
      const busy0 = machineBusy();
      const own0 = process.cpuUsage();
      const started = performance.now();
      const { ms } = await system.drain(n, concurrency);
      const own = process.cpuUsage(own0);
      const wall = performance.now() - started;
      const client = (own.user + own.system) / 1e6;
      const rest = machineBusy() - busy0 - client;
      const perJob = (s: number) => `${Math.round((s * 1e6) / n)} µs/job`;
      const share = (s: number) => `${Math.round((s * 1000 * 100) / wall)}%`;
      console.log(`${name.padEnd(10)} ${Math.round(n / (ms / 1000)).toString().padStart(6)} jobs/s  client ${perJob(client)} (${share(client)} of a core)  server ${perJob(rest)} (${share(rest)})`);
      await system.close();
    }
  }
} finally {
  await server.stop();
}
