// `vercel build` offline, once for this file: the Build Output a deployment would
// upload, checked for what Vercel will run, and its Node tick function called for real.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { jobs as exampleJobs, setup } from "../functions/jobs.js";
import { ROOT } from "../scripts/build-worker.js";
import { VERCEL_TICK_MAX_DURATION_S } from "../src/platform/budget.js";
import { harness } from "./support/harness.js";

// At the file's top, so that its database is dropped after the file (made inside a test, it was left behind).
const h = await harness("deploy_vercel_build");
const OUTPUT = join(ROOT, ".vercel", "output");
const json = <T>(path: string): T => JSON.parse(readFileSync(join(OUTPUT, path), "utf8")) as T;
const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [relative(OUTPUT, join(dir, e.name))]));

// A developer's own `vercel link` (.vercel/project.json) and build output are moved aside
// for this file and put back after it, so running the tests never repoints a real deployment.
const VERCEL_DIR = join(ROOT, ".vercel");
const ASIDE = join(ROOT, ".vercel-before-tests");
beforeAll(() => {
  if (existsSync(VERCEL_DIR)) renameSync(VERCEL_DIR, ASIDE);
  return () => {
    rmSync(VERCEL_DIR, { recursive: true, force: true });
    if (existsSync(ASIDE)) renameSync(ASIDE, VERCEL_DIR);
  };
});

beforeAll(async () => {
  // What `vercel link` would write.
  mkdirSync(join(ROOT, ".vercel"), { recursive: true });
  writeFileSync(join(ROOT, ".vercel", "project.json"), JSON.stringify({ projectId: "prj_local", orgId: "team_local", settings: { framework: null } }));
  // vercel build runs `npm install` first; the lock keeps it from racing another install of the shared node_modules.
  await promisify(execFile)("flock", ["/tmp/npm.lock", join(ROOT, "node_modules", ".bin", "vercel"), "build", "--yes"], {
    cwd: ROOT,
    env: { ...process.env, VERCEL_TELEMETRY_DISABLED: "1", CI: "1" },
    maxBuffer: 32 * 1024 * 1024,
  });
}, 240_000);

describe("vercel build", () => {
  it("declares the minute cron on /api/tick and sends every other path to the API function", () => {
    const config = json<{ crons: unknown[]; routes: Array<{ src?: string; dest?: string }> }>("config.json");
    expect(config.crons).toEqual([{ path: "/api/tick", schedule: "* * * * *" }]);
    const rewrite = config.routes.find((r) => r.dest === "/api");
    expect(rewrite?.src).toBeDefined();
    const matches = (path: string) => new RegExp(rewrite!.src!).test(path);
    expect([matches("/api/jobs"), matches("/dashboard/"), matches("/"), matches("/api/tick")]).toEqual([true, true, true, false]);
  });

  it("builds the tick as a Node.js function with maxDuration and the API as an Edge function", () => {
    const tick = json<{ runtime: string; maxDuration: number; handler: string }>("functions/api/tick.func/.vc-config.json");
    expect(tick.runtime).toMatch(/^nodejs\d+\.x$/);
    expect(tick.maxDuration).toBe(VERCEL_TICK_MAX_DURATION_S);
    expect(json<{ runtime: string; entrypoint: string }>("functions/api/index.func/.vc-config.json")).toMatchObject({ runtime: "edge", entrypoint: "api/index.js" });
    expect(readdirSync(join(OUTPUT, "functions", "api")).sort()).toEqual(["index.func", "tick.func"]);
  });

  it("bundles the Edge function from Web-API code only: no Node built-in, no node-postgres", () => {
    // The build step (vercel.json buildCommand) wrote it; Vercel bundles its packages for the Edge runtime.
    const code = readFileSync(join(ROOT, "functions", "vercel", "dist", "api.js"), "utf8");
    const imported = new Set([...code.matchAll(/\bfrom ?"([^"]+)"|\b(?:import|require)\("([^"]+)"\)/g)].map((m) => (m[1] ?? m[2])!.split("/")[0]!));
    expect([...imported].sort()).toEqual(["@neondatabase", "@vercel", "hono", "zod"]);
  });

  it("publishes no source, config or server file as static", () => {
    expect(walk(join(OUTPUT, "static"))).toEqual(["static/robots.txt"]);
  });

  it("the built tick function is a Request → Response handler that runs the queue against the real server", async () => {
    await setup(h.db);
    const { id } = await h.make(exampleJobs).enqueue("example.record", { note: "built" });
    Object.assign(process.env, { DATABASE_URL: h.url, CRON_SECRET: "built-secret-0123456789", JOBS_KICK: "off" });
    const built = (await import(/* @vite-ignore */ pathToFileURL(join(OUTPUT, "functions/api/tick.func/api/tick.js")).href)) as {
      GET: (request: Request) => Promise<Response>;
    };
    expect((await built.GET(new Request("http://deployment.test/api/tick"))).status).toBe(401);
    const response = await built.GET(new Request("http://deployment.test/api/tick", { headers: { authorization: "Bearer built-secret-0123456789" } }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(await h.rows("SELECT job_id::text, note FROM example_events")).toEqual([{ job_id: id, note: "built" }]);
  });
});
