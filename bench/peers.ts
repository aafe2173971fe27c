// pg-boss and graphile-worker, which only the benchmark needs (and whose
// engines ask for a newer Node than the main install supports), live in
// bench/peers with a package.json and lock file of their own. The first run
// that needs them installs them there (`npm ci --prefix bench/peers`), and again
// whenever that lock file changes.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { countStatementsOf } from "./counting.js";

export type Peers = typeof import("./peers/index.js");

const dir = join(import.meta.dirname, "peers");
const stamp = join(dir, "node_modules", ".pgtick-installed");
const lockHash = () => createHash("sha256").update(readFileSync(join(dir, "package-lock.json"))).digest("hex");

/** The npm that runs this process (`npm run bench`, `npx vitest`), else the one on PATH. */
const npm = (): [string, ...string[]] => {
  const cli = process.env.npm_execpath;
  return cli && /npm-cli\.js$/.test(cli) ? [process.execPath, cli] : ["npm"];
};

const npmCi = (): Promise<void> =>
  new Promise((resolve, reject) => {
    const [program, ...pre] = npm();
    // Only errors: the peers' engines ask for Node 22, which is a warning and not a failure.
    const child = spawn(program, [...pre, "ci", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error"], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    child.once("error", reject);
    child.once("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`could not install the benchmark's peers (npm ci --prefix bench/peers, exit ${code}): ${stderr.trim()}`)),
    );
  });

/** Installs the peers unless what bench/peers/node_modules holds was installed from the current lock file. */
export const installPeers = async (log: (line: string) => void): Promise<void> => {
  const want = lockHash();
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === want) return;
  log("installing the benchmark's peers (pg-boss, graphile-worker) into bench/peers/node_modules, once");
  await npmCi();
  writeFileSync(stamp, want);
};

let loaded: Promise<Peers> | undefined;

/** The peers' modules, installed first when needed; statements through their `pg` are counted too. */
export const loadPeers = (log: (line: string) => void): Promise<Peers> =>
  (loaded ??= (async () => {
    await installPeers(log);
    const peers = await import("./peers/index.js");
    countStatementsOf(peers.pg);
    return peers;
  })());
