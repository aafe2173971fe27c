// Profiling aid: one drain of ours and one of the bare step loop, for
// `node --cpu-prof --import tsx bench/profile/drain-ours.ts [n] [concurrency]`.
import { startServer } from "../server.js";
import { bareSql } from "../systems/bare-sql.js";
import { ours } from "../systems/ours.js";

const n = Number(process.argv[2] ?? 20_000);
const concurrency = Number(process.argv[3] ?? 32);
const server = await startServer();
try {
  for (const [name, make] of [["ours", ours], ["bare-sql", bareSql]] as const) {
    const database = `bench_profile_${name.replace("-", "_")}`;
    const system = await make(await server.createDatabase(database), database);
    await system.fill(n, 1_000);
    await server.admin(database, "VACUUM (ANALYZE)");
    const { ms } = await system.drain(n, concurrency);
    console.log(`${name}: ${Math.round(n / (ms / 1000))} jobs/s`);
    await system.close();
  }
} finally {
  await server.stop();
}
