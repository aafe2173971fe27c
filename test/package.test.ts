// The package as an app gets it: `npm pack` (its prepack builds dist/), unpacked as node_modules/pgtick of a
// new project whose other packages are this repository's (linked: no network). Plain Node imports every
// entry point, a strict TypeScript project type-checks against the .d.ts with none of this repository's
// compiler options, a bundler takes the Worker's migrations stand-in, the tarball holds the build and no
// other repository files than the executable, which runs the compiled CLI on a TypeScript jobs module
// against the test database.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase } from "./support/db.js";
import { emptyFolder, isolatedEnv } from "./support/isolated-env.js";

const ROOT = resolve(import.meta.dirname, "..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  exports: Record<string, string | Record<string, string>>;
  bin: Record<string, string>;
};

/** Every entry point, with a few of the names it exports. */
const ENTRIES: Record<string, readonly string[]> = {
  pgtick: ["createJobs", "defineJob", "defineSchedule", "migrate", "fromPg", "JobsError"],
  "pgtick/http": ["createApp", "createDashboard", "ROUTES", "openApiDocument"],
  "pgtick/client": ["createClient", "JobsApiError"],
  "pgtick/vercel": ["vercelApi"],
  "pgtick/vercel/tick": ["vercelTick"],
  "pgtick/cloudflare": ["cloudflareWorker"],
  "pgtick/otel": ["openTelemetry"],
};

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A child as the app's own shell would run it: no NODE_OPTIONS (so no "pgtick-source" condition), none of pgtick's variables. */
const run = (file: string, args: readonly string[], cwd: string, env: Record<string, string> = {}, timeout = 50_000): Promise<Run> =>
  new Promise((done) => {
    const { NODE_OPTIONS: _dropped, ...rest } = isolatedEnv(env);
    execFile(file, args, { cwd, env: rest, maxBuffer: 16 * 1024 * 1024, timeout }, (error, stdout, stderr) =>
      done({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr: error?.killed ? `${stderr}\n(killed after ${timeout} ms)` : stderr }),
    );
  });

const dir = emptyFolder("pgtick-package-");
const app = join(dir, "app");
let tarball: string[] = [];

beforeAll(async () => {
  // The pack builds the package (tsc and more): over 50 s on a loaded 2-core machine.
  const packed = await run("npm", ["pack", "--json", "--pack-destination", dir], ROOT, {}, 110_000);
  expect(packed.code, packed.stderr).toBe(0);
  const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = info!.files.map((f) => f.path).sort();
  const untar = await run("tar", ["-xzf", join(dir, info!.filename), "-C", dir], dir);
  expect(untar.code, untar.stderr).toBe(0);
  mkdirSync(join(app, "node_modules", "@types"), { recursive: true });
  renameSync(join(dir, "package"), join(app, "node_modules", "pgtick"));
  // Every other package is this repository's, except @types/node: the app has no Node types.
  const modules = join(ROOT, "node_modules");
  for (const name of readdirSync(modules)) {
    if (name.startsWith(".") || name === "pgtick") continue;
    if (name !== "@types") symlinkSync(join(modules, name), join(app, "node_modules", name));
    else for (const types of readdirSync(join(modules, name))) if (types !== "node") symlinkSync(join(modules, name, types), join(app, "node_modules", name, types));
  }
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
}, 120_000);

describe("the tarball", () => {
  it("holds the build, the executable, package.json and the README, and nothing else of the repository", () => {
    expect(pkg.bin.pgtick).toBe("src/cli/bin.mjs");
    const own = ["package.json", "README.md", pkg.bin.pgtick];
    expect(tarball.filter((f) => !f.startsWith("dist/") && !own.includes(f))).toEqual([]);
    expect(tarball.filter((f) => /^(src|test|bench|scripts|functions|examples|migrations|api|\.ci)\//.test(f))).toEqual([pkg.bin.pgtick]);
    expect(tarball).toEqual(expect.arrayContaining(["dist/package.json", "dist/cli/pgtick.js", "dist/migrations.generated.js", "dist/migrations.node.js", "dist/migrate-run.js", "dist/migrations.elsewhere.js"]));
  });

  it("takes zod and hono from the app (peer dependencies): one copy, so the app's schemas and Hono apps are the types pgtick's take", () => {
    const manifest = JSON.parse(readFileSync(join(app, "node_modules", "pgtick", "package.json"), "utf8")) as Record<string, Record<string, string>>;
    expect(Object.keys(manifest.dependencies!).filter((d) => d === "zod" || d === "hono")).toEqual([]);
    expect(manifest.peerDependencies).toMatchObject({ zod: expect.stringMatching(/^\^4\./), hono: expect.stringMatching(/^\^4\./) });
  });

  it("has each entry point's JavaScript and declarations where package.json says, compiled from the source its pgtick-source condition names", () => {
    const entries = Object.entries(pkg.exports).filter(([k]) => k !== "./package.json");
    expect(entries.map(([k]) => (k === "." ? "pgtick" : `pgtick/${k.slice(2)}`)).sort()).toEqual(Object.keys(ENTRIES).sort());
    for (const [key, targets] of entries) {
      expect(typeof targets, key).toBe("object");
      const { "pgtick-source": source, types, default: js, ...other } = targets as Record<string, string>;
      // The source condition first: a tool that has it enabled must not stop at "types" or "default".
      expect(Object.keys(targets)[0], key).toBe("pgtick-source");
      expect(other, key).toEqual({});
      expect(existsSync(join(ROOT, source!)), source).toBe(true);
      const base = source!.replace(/^\.\/src\//, "dist/").replace(/\.tsx?$/, "");
      expect([types, js], key).toEqual([`./${base}.d.ts`, `./${base}.js`]);
      expect(tarball, key).toEqual(expect.arrayContaining([`${base}.d.ts`, `${base}.js`]));
    }
  });
});

describe("in this repository", () => {
  it("wrangler.toml's [alias] sends pgtick's names to the files of a package build its [build] makes, as an app's bundler gets dist/", () => {
    const toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
    const section = /^\[alias\]\n((?:"[^"\n]+" = "[^"\n]+"\n)+)/m.exec(toml);
    expect(section, "wrangler.toml has an [alias] table").not.toBeNull();
    const aliases = [...section![1]!.matchAll(/^"([^"]+)" = "([^"]+)"$/gm)];
    // Every entry point: an alias matches a whole name, so an app's worker importing pgtick/otel needs its own.
    const named = Object.keys(pkg.exports).filter((k) => k !== "./package.json").map((k) => (k === "." ? "pgtick" : `pgtick/${k.slice(2)}`));
    expect(aliases.map(([, name]) => name).sort()).toEqual(named.sort());
    for (const [, name, target] of aliases) {
      const key = name === "pgtick" ? "." : `./${name!.replace(/^pgtick\//, "")}`;
      expect((pkg.exports[key] as Record<string, string> | undefined)?.default?.replace(/^\.\/dist\//, "./.wrangler/pkg/"), name).toBe(target);
    }
    expect(toml).toMatch(/^\[build\]\ncommand = "npx tsx scripts\/build\.ts \.wrangler\/pkg"$/m);
  });
});

describe("an app that installed it", () => {
  it("imports every entry point in plain Node, and renders the dashboard (JSX compiled to hono's runtime)", async () => {
    writeFileSync(join(app, "imports.mjs"), `
      const entries = ${JSON.stringify(ENTRIES)};
      const missing = {};
      for (const [entry, names] of Object.entries(entries)) {
        const m = await import(entry);
        missing[entry] = names.filter((n) => m[n] === undefined);
      }
      const { createJobs, defineJob } = await import("pgtick");
      const { createApp } = await import("pgtick/http");
      const { z } = await import("zod");
      const db = { query: async () => { throw new Error("no database here"); } };
      const jobs = createJobs({ db, jobs: [defineJob({ name: "a", schema: z.object({}), handler: async () => {} })] });
      const res = await createApp({ jobs, env: { DASHBOARD_PASSWORD: "a-long-enough-password-1234567890" } }).request("/dashboard/login");
      console.log(JSON.stringify({ missing, status: res.status, form: (await res.text()).includes("<form") }));
    `);
    const r = await run(process.execPath, ["imports.mjs"], app);
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual({ missing: Object.fromEntries(Object.keys(ENTRIES).map((e) => [e, []])), status: 200, form: true });
  });

  it("type-checks a strict project against the .d.ts: no jsx option, no DOM lib, no Node types, exactOptionalPropertyTypes (skipLibCheck on)", async () => {
    writeFileSync(join(app, "consumer.ts"), `
      import { z } from "zod";
      import { createJobs, type Db, defineJob, defineSchedule } from "pgtick";
      import { createApp, createDashboard } from "pgtick/http";
      import { createClient } from "pgtick/client";

      const sendEmail = defineJob({
        name: "send-email",
        schema: z.object({ to: z.string(), subject: z.string().optional() }),
        output: z.object({ messageId: z.string() }),
        maxAttempts: 3,
        handler: async ({ to, subject }, ctx) => {
          ctx.log("info", "sending", { to, subject: subject ?? null });
          return { messageId: \`\${ctx.jobId}:\${to}\` };
        },
      });
      export const jobList = [sendEmail] as const;

      declare const db: Db;
      const jobs = createJobs({ db, jobs: jobList });
      export const enqueued: Promise<{ id: string }> = jobs.enqueue("send-email", { to: "a@b.example" }, { delayMs: 1_000, idempotencyKey: "k" });
      // @ts-expect-error: the payload is typed by the job's schema (the declarations carry the types, not any)
      void jobs.enqueue("send-email", { to: 42 });
      // @ts-expect-error: no job has that name
      void jobs.enqueue("no-such-job", {});
      export const app = createApp({ jobs, env: { JOBS_API_TOKEN: "token" } });

      const client = createClient<typeof jobList>({ baseUrl: "http://127.0.0.1:3000", token: "token" });
      export const result: Promise<{ messageId: string }> = client.waitForResult("id", { timeoutMs: 1_000 });
      // @ts-expect-error: the client's payloads are typed too
      void client.enqueue("send-email", { to: 42 });
      // Optional values pass through as they are, undefined included (exactOptionalPropertyTypes).
      declare const maybe: number | undefined;
      declare const cursor: string | undefined;
      void jobs.enqueue("send-email", { to: "a@b.example" }, { delayMs: maybe, idempotencyKey: cursor, priority: maybe });
      void jobs.list({ cursor, limit: maybe });
      void jobs.runs.list({ cursor, job: cursor });
      void jobs.deadLetters.list({ cursor, reason: cursor });
      void client.enqueue("send-email", { to: "a@b.example" }, { delayMs: maybe });
      void client.runs.list({ cursor });
      void client.deadLetters.list({ cursor });
      void client.waitForResult("id", { timeoutMs: maybe });
      declare const flag: boolean | undefined;
      void jobs.tick({ budgetMs: maybe, concurrency: maybe, signal: undefined });
      void jobs.get("id", { payload: flag });
      void jobs.runs.rerun("id", { idempotencyKey: cursor });
      void jobs.deadLetters.replay("id", { replays: maybe });
      void jobs.deadLetters.replayMany({ job: "send-email", reason: cursor, limit: maybe, cursor });
      void jobs.schedules.list({ next: maybe, limit: maybe, cursor });
      void jobs.schedules.run("nightly", { idempotencyKey: cursor });
      void createJobs({ db, jobs: jobList, settings: { concurrency: maybe, leaseMs: maybe }, logger: undefined, schedules: undefined });
      void createApp({ jobs, env: {}, tickOptions: undefined, logger: undefined });
      void createDashboard({ jobs, basePath: cursor, refreshMs: maybe, password: cursor });
      void client.runs.rerun("id", { idempotencyKey: cursor });
      void client.deadLetters.replay("id", { replays: maybe });
      void client.deadLetters.replayMany({ job: "send-email", reason: cursor, limit: maybe, cursor });
      void client.schedules.list({ next: maybe, cursor });
      void client.schedules.run("nightly", { idempotencyKey: cursor });
      void createClient({ baseUrl: "http://127.0.0.1:3000", token: "token", fetch: undefined });
      export const maybeJob = defineJob({ name: "maybe", schema: z.object({}), handler: () => {}, maxAttempts: maybe, timeoutMs: maybe, priority: maybe, backoff: { baseMs: maybe, maxMs: maybe }, concurrency: undefined, rateLimit: undefined });
      export const maybeSchedule = defineSchedule({ name: "m", cron: "0 * * * *", job: "maybe", payload: {}, timezone: cursor, missed: undefined, dayMatch: undefined });
      void createApp({ jobs, env: {}, openApi: undefined, payloadSchemas: undefined });
    `);
    const strict = { target: "ES2022", lib: ["ES2022"], types: [], strict: true, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, skipLibCheck: true, noEmit: true };
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    for (const [name, resolution] of [["bundler", { module: "ESNext", moduleResolution: "bundler" }], ["node16", { module: "node16", moduleResolution: "node16" }]] as const) {
      writeFileSync(join(app, `tsconfig.${name}.json`), JSON.stringify({ compilerOptions: { ...strict, ...resolution }, files: ["consumer.ts"] }));
      const r = await run(process.execPath, [tsc, "-p", `tsconfig.${name}.json`], app);
      expect({ name, output: r.stdout + r.stderr, code: r.code }).toEqual({ name, output: "", code: 0 });
    }
  });

  it("emits declarations for a project exporting what the entry points return (every type it names is exported)", async () => {
    // A library or a composite project writes a .d.ts of its own: each inferred type must be one it can name.
    writeFileSync(join(app, "exported.ts"), `
      import { z } from "zod";
      import { createJobs, type Db, defineJob } from "pgtick";
      import { cloudflareWorker } from "pgtick/cloudflare";
      import { createDashboard } from "pgtick/http";
      import { vercelLimit } from "pgtick/vercel/tick";

      const ping = defineJob({ name: "ping", schema: z.object({}), handler: async () => {} });
      export const jobList = [ping] as const;
      declare const db: Db;
      export const jobs = createJobs({ db, jobs: jobList });
      export default cloudflareWorker({ jobs: jobList });
      export const dashboard = createDashboard({ jobs });
      export const limit = vercelLimit;
      export const series = () => jobs.series("1h");
    `);
    const options = { target: "ES2022", lib: ["ES2022", "DOM"], types: [], strict: true, skipLibCheck: true, declaration: true, emitDeclarationOnly: true, outDir: "types-out", module: "node16", moduleResolution: "node16" };
    writeFileSync(join(app, "tsconfig.declarations.json"), JSON.stringify({ compilerOptions: options, files: ["exported.ts"] }));
    const r = await run(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.declarations.json"], app);
    expect({ output: r.stdout + r.stderr, code: r.code }).toEqual({ output: "", code: 0 });
  });

  it("bundles for a Worker with the migrations' stand-in (the workerd condition of dist/package.json's #migrations)", async () => {
    const { build } = await import("esbuild");
    const bundle = async (entry: string, conditions: string[]) => {
      const out = await build({
        stdin: { contents: `export * from "${entry}";`, resolveDir: app, loader: "js" }, absWorkingDir: app,
        bundle: true, write: false, metafile: true, format: "esm", platform: "neutral", mainFields: ["module", "main"], conditions, logLevel: "silent",
        external: ["hono", "hono/*", "zod", "zod/*", "pg", "@neondatabase/serverless", "@vercel/functions", "@opentelemetry/api"],
      });
      return Object.keys(out.metafile.inputs).filter((f) => f.includes("/migrations.") || f.includes("/migrate-run."));
    };
    // As wrangler builds a worker.
    expect((await bundle("pgtick/cloudflare", ["workerd", "worker", "browser"])).sort()).toEqual(["node_modules/pgtick/dist/migrations.elsewhere.js", "node_modules/pgtick/dist/migrations.latest.js"]);
    // Elsewhere the migrations and their runner; a Worker has neither.
    expect((await bundle("pgtick/vercel", [])).sort()).toEqual([
      "node_modules/pgtick/dist/migrate-run.js", "node_modules/pgtick/dist/migrations.generated.js", "node_modules/pgtick/dist/migrations.latest.js", "node_modules/pgtick/dist/migrations.node.js",
    ]);
  });

  describe("the pgtick executable", () => {
    const database = freshDatabase("package_bin");
    afterAll(async () => (await database).drop());

    it("runs the compiled CLI on a TypeScript jobs module of a CommonJS package, loaded through tsx", async () => {
      const cjs = join(app, "cjs");
      mkdirSync(cjs);
      writeFileSync(join(cjs, "package.json"), JSON.stringify({ name: "cjs-app", private: true }));
      writeFileSync(join(cjs, "jobs.ts"), `
        import { z } from "zod";
        import { defineJob } from "pgtick";

        export const jobs = [
          defineJob({ name: "hello", schema: z.object({ name: z.string() }), handler: async ({ name }, ctx): Promise<void> => ctx.log("info", \`hello \${name}\`) }),
        ];
      `);
      const env = { DATABASE_URL: (await database).url, JOBS_MODULE: join(cjs, "jobs.ts") };
      const bin = (...args: string[]) => run(process.execPath, [join(app, "node_modules", "pgtick", pkg.bin.pgtick!), ...args], cjs, env);
      expect(await bin("migrate")).toMatchObject({ code: 0, stderr: "", stdout: expect.stringMatching(/^applied migrations 1, 2, /) });
      expect(await bin("enqueue", "hello", '{"name":1}')).toMatchObject({ code: 3, stderr: expect.stringMatching(/^pgtick: payload for hello does not match its schema/) });
      expect(await bin("enqueue", "hello", '{"name":"Ada"}')).toMatchObject({ code: 0, stderr: "" });
      const tick = await bin("tick", "--json", "--budget", "10s");
      expect(tick.stderr).toBe("");
      expect(JSON.parse(tick.stdout)).toMatchObject({ claimed: 1, succeeded: 1 });
    });
  });
});
