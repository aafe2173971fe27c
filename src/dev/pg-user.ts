// As root, the embedded PostgreSQL runs as the `postgres` user (initdb and
// postgres refuse to run as root). That user must be able to walk to the
// binaries and to the data folder, which a checkout in /root or in a
// `mktemp -d` folder (both mode 700) does not allow.
import { execFileSync, type ExecFileSyncOptionsWithStringEncoding } from "node:child_process";
import { existsSync, realpathSync, statSync, type Stats } from "node:fs";
import { dirname, join, parse, relative, sep } from "node:path";

/** Why the embedded PostgreSQL cannot start here, and what to do, in one line. */
export class EmbeddedPostgresError extends Error {
  readonly code = "embedded_postgres";
  override readonly name = "EmbeddedPostgresError";
}

export interface PostgresUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

const NAME = "postgres";
const quiet: ExecFileSyncOptionsWithStringEncoding = { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] };
const lookUp = (): PostgresUser => ({
  name: NAME,
  uid: Number(execFileSync("id", ["-u", NAME], quiet).trim()),
  gid: Number(execFileSync("id", ["-g", NAME], quiet).trim()),
});

let known: PostgresUser | undefined;

/**
 * Undefined unless this process is root (PostgreSQL then runs as this user);
 * else the `postgres` user, created when missing (as embedded-postgres does).
 */
export const postgresUser = (): PostgresUser | undefined => {
  if (process.getuid?.() !== 0) return undefined;
  if (known) return known;
  try {
    return (known = lookUp());
  } catch {
    // No such user yet.
  }
  try {
    execFileSync("groupadd", [NAME], quiet);
  } catch {
    // The group may exist without the user; useradd says what is really wrong.
  }
  try {
    execFileSync("useradd", ["-g", NAME, NAME], quiet);
    return (known = lookUp());
  } catch (e) {
    const reason = (e as { stderr?: string }).stderr?.trim().split("\n").pop() || (e as Error).message;
    throw new EmbeddedPostgresError(
      `PostgreSQL does not run as root and there is no "${NAME}" user to run it as; creating one failed (${reason}): create that user, run as another user, or set DATABASE_URL`,
    );
  }
};

/** Whether `user` may enter a folder with these owner and mode bits (supplementary groups are not counted). */
const mayEnter = (st: Stats, user: PostgresUser): boolean => {
  if (st.uid === user.uid) return (st.mode & 0o100) !== 0;
  if (st.gid === user.gid) return (st.mode & 0o010) !== 0;
  return (st.mode & 0o001) !== 0;
};

/**
 * The first folder on the way to `path` (itself included, when it is a folder)
 * that `user` cannot enter; undefined when there is none. For a path that does
 * not exist yet, the part that exists is checked.
 */
export const firstClosedFolder = (path: string, user: PostgresUser): string | undefined => {
  let existing = path;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  const real = realpathSync(existing);
  const { root } = parse(real);
  let folder = root;
  for (const part of ["", ...relative(root, real).split(sep).filter(Boolean)]) {
    folder = join(folder, part);
    const st = statSync(folder);
    if (!st.isDirectory()) return undefined;
    if (!mayEnter(st, user)) return folder;
  }
  return undefined;
};

/**
 * Whether root may keep things for `user` in `dir`: root's own folder that the
 * user can enter and where no one else can replace root's entries (writable by
 * root alone, or sticky like /tmp).
 */
export const safeForRoot = (dir: string, user: PostgresUser): boolean => {
  const st = statSync(dir, { throwIfNoEntry: false });
  return !!st?.isDirectory() && st.uid === 0 && (!(st.mode & 0o002) || !!(st.mode & 0o1000)) && !firstClosedFolder(dir, user);
};
