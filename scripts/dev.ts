// `npm run dev`: see src/dev/server.ts. Stops cleanly on Ctrl-C (SIGINT), SIGTERM or SIGHUP and exits 0
// (1, saying so, when a tick failed while stopping: its jobs may stay claimed until their leases end).
import { oneLine } from "../src/exit-codes.js";
import { startDevServer } from "../src/dev/server.js";

const out = (line: string) => void process.stdout.write(`${line}\n`);
let server: Awaited<ReturnType<typeof startDevServer>> | undefined;
/** Stops PostgreSQL at once: given by the server as soon as it may start it. */
let halt: (() => Promise<void>) | undefined;
/** 1 once stopping, 2 once stopping at once. */
let stage = 0;
let lastSignalAt = 0;
const shutdown = async (signal: string) => {
  // Under `npm run`, one Ctrl-C arrives more than once (the terminal's, then npm's forward):
  // a repeat within a second is the same Ctrl-C.
  if (stage > 0 && Date.now() - lastSignalAt <= 1_000) return;
  lastSignalAt = Date.now();
  // A second Ctrl-C stops at once. PostgreSQL, in a session of its own, is stopped first (it ran on,
  // with the server's file left behind); a third does not wait for it.
  if (++stage > 1) {
    if (stage > 2 || !halt) process.exit(1);
    out(`${signal} again: stopping at once (the jobs running stay claimed until their leases end)`);
    void Promise.race([halt(), new Promise((r) => setTimeout(r, 10_000))]).finally(() => process.exit(1));
    return;
  }
  out(`\n${signal}: stopping (a running tick requeues its jobs first)`);
  // Still starting: it stops as soon as it has started (see below), so nothing is left running.
  if (!server) return;
  const clean = await server.stop();
  out(clean ? "stopped" : "stopped, with jobs left claimed (see above)");
  process.exit(clean ? 0 : 1);
};
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
// The terminal closed: stop as on Ctrl-C, or the database (in a session of its own) would run on.
process.on("SIGHUP", () => {
  // Writes to a closed terminal fail; they must not end the process before the database is stopped.
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => {});
  void shutdown("SIGHUP");
});

try {
  server = await startDevServer({ env: process.env, cwd: process.cwd(), out, onHalt: (h) => (halt = h) });
  if (stage > 0) {
    await server.stop();
    out("stopped");
    process.exit(0);
  }
} catch (e) {
  process.stderr.write(`dev: ${oneLine(e)}\n`);
  process.exit(1);
}
