// Where a cluster's data lives. Normally in the folder asked for. As root, when
// the `postgres` user cannot enter a folder on the way there (a checkout in
// /root, a `mktemp -d` folder), the data lives in a folder root makes for it
// under /var/tmp (or the temp folder), and the folder asked for is a link to it:
// the same path finds the same data next time, and removing it is one step.
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, symlinkSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join } from "node:path";
import { EmbeddedPostgresError, firstClosedFolder, type PostgresUser, safeForRoot } from "./pg-user.js";

const HOLDER = "pgtick-pg-";

/** Whether `data` is one that `placeDataDir` made: in a root-owned holder no one else may write, and the user's. */
const madeHere = (data: string, user: PostgresUser): boolean => {
  const holder = lstatSync(dirname(data), { throwIfNoEntry: false });
  const own = lstatSync(data, { throwIfNoEntry: false });
  return (
    basename(dirname(data)).startsWith(HOLDER) &&
    !!holder?.isDirectory() &&
    holder.uid === 0 &&
    !(holder.mode & 0o022) &&
    !!own?.isDirectory() &&
    own.uid === user.uid
  );
};

const relocate = (dir: string, user: PostgresUser, closed: string): string => {
  const base = [...new Set(["/var/tmp", tmpdir()])].find((d) => safeForRoot(d, user));
  if (!base) {
    throw new EmbeddedPostgresError(
      `PostgreSQL runs as the ${user.name} user, which cannot enter ${closed} on the way to its data folder ${dir}, and there is no temp folder it can enter: set DEV_DIR to a folder other users can enter, or set DATABASE_URL`,
    );
  }
  // mkdtemp: a name no one can take first; mode 711 lets the user through without listing it.
  const holder = mkdtempSync(join(base, HOLDER));
  chmodSync(holder, 0o711);
  const data = join(holder, "data");
  mkdirSync(data, { mode: 0o700 });
  chownSync(data, user.uid, user.gid);
  symlinkSync(data, dir);
  return data;
};

/**
 * The data folder PostgreSQL is given for `dir`, made (owned by `user`) when it
 * does not exist yet. `user` undefined: this process's user runs PostgreSQL.
 */
export const placeDataDir = (dir: string, user: PostgresUser | undefined): string => {
  if (!user) {
    mkdirSync(dir, { recursive: true });
    return dir;
  }
  mkdirSync(dirname(dir), { recursive: true });
  const st = lstatSync(dir, { throwIfNoEntry: false });
  if (st?.isSymbolicLink()) {
    const data = readlinkSync(dir);
    if (isAbsolute(data) && madeHere(data, user)) return data;
    if (isAbsolute(data) && !lstatSync(data, { throwIfNoEntry: false }) && basename(dirname(data)).startsWith(HOLDER)) {
      // Its holder was cleaned out of the temp folder: start afresh, as after removing the folder.
      unlinkSync(dir);
    } else {
      throw new EmbeddedPostgresError(`${dir} links to ${data}, which is not a data folder made for ${user.name}: remove ${dir} and start again`);
    }
  }
  const closed = firstClosedFolder(dirname(dir), user);
  if (closed) {
    if (st?.isDirectory() && !st.isSymbolicLink() && readdirSync(dir).length > 0) {
      throw new EmbeddedPostgresError(
        `PostgreSQL runs as the ${user.name} user, which cannot enter ${closed}, so it cannot use the data folder ${dir}: let other users enter ${closed} (chmod o+x) or move the folder`,
      );
    }
    if (st?.isDirectory() && !st.isSymbolicLink()) rmSync(dir, { recursive: true });
    return relocate(dir, user, closed);
  }
  mkdirSync(dir, { recursive: true });
  if (readdirSync(dir).length === 0) chownSync(dir, user.uid, user.gid);
  return dir;
};

/** Removes a cluster's data: the folder, or the link and what it leads to. */
export const removeDataDir = (dir: string, user: PostgresUser | undefined): void => {
  const st = lstatSync(dir, { throwIfNoEntry: false });
  if (st?.isSymbolicLink() && user) {
    const data = readlinkSync(dir);
    if (isAbsolute(data) && madeHere(data, user)) rmSync(dirname(data), { recursive: true, force: true });
  }
  rmSync(dir, { recursive: true, force: true });
};
