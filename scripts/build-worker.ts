// Builds the Cloudflare worker exactly as `wrangler deploy` would upload it, without
// uploading (`--dry-run --outdir`), and prints its size: `npm run build:worker`.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";

export const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));

export interface WorkerBuild {
  /** The bundle's entry module, to run in Miniflare. */
  readonly scriptPath: string;
  readonly bytes: number;
  readonly gzipBytes: number;
}

/** Runs wrangler's real build (offline: no login, no metrics) into `outdir`. */
export const buildWorker = async (outdir = join(ROOT, ".wrangler", "bundle")): Promise<WorkerBuild> => {
  const wrangler = join(ROOT, "node_modules", ".bin", "wrangler");
  await promisify(execFile)(wrangler, ["deploy", "--dry-run", "--outdir", outdir], {
    cwd: ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
    maxBuffer: 16 * 1024 * 1024,
  });
  const scriptPath = join(outdir, "worker.js");
  const code = readFileSync(scriptPath);
  return { scriptPath, bytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length };
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const build = await buildWorker(process.argv[2] ? resolve(process.argv[2]) : undefined);
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  console.log(`${build.scriptPath}: ${build.bytes} bytes (${kb(build.bytes)}), gzip -9 ${build.gzipBytes} bytes (${kb(build.gzipBytes)})`);
}
