// Profiling aid (not part of `npm run bench`): where the machine's CPU goes while one system
// drains, read by sampling every core with Linux `perf` (software clock, so it works in a VM
// without hardware counters). For each drain, the CPU time per job of this process (the client),
// of the PostgreSQL backends (the server) and of the rest, each split into user code and kernel,
// the machine's idle share, and the server's heaviest functions per job. Systems alternate, so a
// slow phase of the machine hits both. Needs `perf` and root (or perf_event_paranoid <= 0).
//   npx tsx bench/profile/perf-split.ts [n] [concurrency] [systems] [reps]
//   systems: ours, graphile (default both); e.g. npx tsx bench/profile/perf-split.ts 40000 32 ours,graphile 2
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadPeers } from "../peers.js";
import { startServer } from "../server.js";
import { graphileWorker } from "../systems/graphile-worker.js";
import { ours } from "../systems/ours.js";
import type { DrainSystem } from "../systems/system.js";

const n = Number(process.argv[2] ?? 40_000);
const concurrency = Number(process.argv[3] ?? 32);
const names = (process.argv[4] ?? "ours,graphile").split(",");
const reps = Number(process.argv[5] ?? 1);
const TOP = 15;

/** `perf report` rows of one recording: sample period (ns of CPU) per key, keys joined by a tab. */
const report = (rec: Recording, sort: string, extra: string[] = []): Array<{ ns: number; key: string[] }> =>
  execFileSync("perf", ["report", "-i", rec.file, "--time", rec.window, "--stdio", "--no-children", "-g", "none", "--sort", sort, "-F", `period,${sort}`, "-t", "\t", ...extra], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    stdio: ["ignore", "pipe", "ignore"],
  })
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.startsWith("#"))
    .map((l) => l.split("\t").map((s) => s.trim()))
    .map(([ns, ...key]) => ({ ns: Number(ns), key }))
    .sort((a, b) => b.ns - a.ns);

const make = async (name: string, url: string, database: string): Promise<DrainSystem> => {
  if (name === "ours") return ours(url, database);
  if (name === "graphile") return graphileWorker(await loadPeers(() => {}), url, database, "recommended");
  throw new Error(`unknown system ${name} (ours or graphile)`);
};

interface Recording {
  readonly file: string;
  /** The drain's start and end on the monotonic clock (perf's `--time` format), so only its samples count. */
  readonly window: string;
  readonly ms: number;
}

/** Monotonic clock now, as perf's `--time` reads it (seconds.microseconds). */
const monotonic = () => {
  const us = process.hrtime.bigint() / 1_000n;
  return `${us / 1_000_000n}.${(us % 1_000_000n).toString().padStart(6, "0")}`;
};

const record = async (file: string, drain: () => Promise<{ ms: number }>): Promise<Recording> => {
  // Samples stamped with the monotonic clock, the one process.hrtime reads.
  const perf = spawn("perf", ["record", "-a", "-k", "CLOCK_MONOTONIC", "-o", file], { stdio: "ignore" });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => perf.on("exit", (code, signal) => resolve({ code, signal })));
  // perf needs a moment to open its buffers on every core before the drain starts.
  await new Promise((r) => setTimeout(r, 500));
  const from = monotonic();
  const { ms } = await drain();
  const to = monotonic();
  // SIGTERM, not SIGINT: a child started from a shell in the background may ignore SIGINT. perf
  // writes its data and exits either way.
  perf.kill("SIGTERM");
  const { code, signal } = await exited;
  if (code !== 0 && signal !== "SIGTERM") throw new Error(`perf record failed (${code ?? signal}): is perf installed, and may this user sample every core?`);
  return { file, window: `${from},${to}`, ms };
};

const dir = mkdtempSync(join(tmpdir(), "pgtick-perf-"));
const server = await startServer();
try {
  for (let rep = 0; rep < reps; rep++) {
    for (const name of rep % 2 ? [...names].reverse() : names) {
      const database = `perf_split_${name}_${rep}`;
      const system = await make(name, await server.createDatabase(database), database);
      await system.fill(n, 1_000);
      await server.admin(database, "VACUUM (ANALYZE)");
      const data = join(dir, `${database}.data`);
      let rec: Recording;
      try {
        rec = await record(data, () => system.drain(n, concurrency));
      } finally {
        await system.close();
      }
      const { ms } = rec;

      const us = (ns: number) => (ns / 1_000 / n).toFixed(1).padStart(5);
      // Per command and user/kernel: "node" is this process (and any other Node.js process running
      // meanwhile: run nothing else), "postgres" the backends.
      const rows = report(rec, "comm,dso");
      const sum = (pred: (comm: string, dso: string) => boolean) => rows.filter((r) => pred(r.key[0]!, r.key[1]!)).reduce((s, r) => s + r.ns, 0);
      const kernel = (dso: string) => dso.includes("kernel");
      const all = sum(() => true);
      const idle = sum((c) => c === "swapper");
      const line = (label: string, comm: string) =>
        `${label} ${us(sum((c) => c === comm))} µs/job (user ${us(sum((c, d) => c === comm && !kernel(d)))}, kernel ${us(sum((c, d) => c === comm && kernel(d)))})`;
      console.log(`${name} ${Math.round(n / (ms / 1000))} jobs/s, machine idle ${Math.round((100 * idle) / all)}%`);
      console.log(`  ${line("client", "node")}`);
      console.log(`  ${line("server", "postgres")}`);
      console.log(`  rest   ${us(all - idle - sum((c) => c === "node" || c === "postgres"))} µs/job`);
      const symbols = report(rec, "sym", ["--comm", "postgres"]).slice(0, TOP);
      console.log(`  server's heaviest functions, µs per job: ${symbols.map((s) => `${s.key[0]!.replace(/^\[[.k]\] /, "")} ${us(s.ns).trim()}`).join(", ")}`);
    }
  }
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
