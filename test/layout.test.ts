// The layout ARCHITECTURE.md describes, checked on the source: which folders of src/ may import
// which, what each public entry point pulls in, that functions/ use the package's entry points,
// that SQL lives in src/store, and that no file under src/ grows past MAX_LINES. The tables here
// are mirrored in ARCHITECTURE.md (a test compares them): change both together.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  edgeViolations, entryViolations, type EntryRule, type Exception, functionsViolations, type LayoutRules, longFiles, migrationViolations,
  packageViolations, readGraph, stackedDocComments, type Rule, sqlOutsideStore, staleExceptions, storeNameViolations, unitOf,
} from "./support/layout.js";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));

/** Past this many lines a file under src/ fails the test (the house rule says about 300). */
const MAX_LINES = 320;

// ---------------------------------------------------------------------------------------------
// The rules. A unit is a folder of src/ (src/store/<x> each count as one), a file at the root of
// src/, or functions/. A target is a unit or one file (src-relative, e.g. "http/route-table.ts").

/** Modules that import nothing of src/: every unit may use them. */
const LEAVES = ["db.ts", "db-cancel.ts", "errors.ts", "terms.ts", "error-text.ts", "log.ts", "ids.ts", "secret-compare.ts", "iso-time.ts", "due-now.ts", "json-limits.ts", "option-keys.ts", "body-limit.ts", "body-drain.ts", "db-prepare.ts", "terminal.ts"];
/** What a job is and what its payload and limits mean: pure code over a definition, no I/O. */
const DOMAIN = ["job.ts", "payload.ts", "flow"];
/** The read side of the store, which the presentation units may reach for types and constants. */
const READS = ["store/admin", "store/runs", "store/shared"];
const STORE = ["store/shared", "store/tick", "store/enqueue", "store/admin", "store/runs", "store/schedules"];
const GROUPS: Record<string, readonly string[]> = { LEAVES, DOMAIN, READS, STORE };

const leaf: Rule = { imports: [] };

/** Unit -> what it may import. Group names (LEAVES, DOMAIN, READS, STORE) stand for their members. */
const RULES: Record<string, Rule> = {
  "db.ts": { imports: ["db-cancel.ts", "db-prepare.ts"] }, "db-cancel.ts": leaf, "errors.ts": leaf, "terms.ts": leaf, "error-text.ts": leaf, "log.ts": leaf, "ids.ts": leaf, "secret-compare.ts": leaf, "iso-time.ts": leaf, "due-now.ts": leaf, "json-limits.ts": leaf, "option-keys.ts": { imports: ["errors.ts"] }, "body-limit.ts": leaf, "body-drain.ts": leaf, "db-prepare.ts": leaf, "terminal.ts": leaf,
  settings: { imports: ["LEAVES"] },
  // The operator's exit codes and one-line errors, shared by the CLI, the dev server and the module loader.
  "exit-codes.ts": { imports: ["LEAVES"] },
  "job.ts": { imports: ["LEAVES", "flow"] },
  "payload.ts": { imports: ["LEAVES", "job.ts"] },
  flow: { imports: ["LEAVES", "job.ts", "payload.ts"] },
  "store/shared": { imports: ["LEAVES"] },
  "store/tick": { imports: ["LEAVES", "store/shared"] },
  "store/enqueue": { imports: ["LEAVES", "store/shared"], types: ["flow"] },
  "store/schedules": { imports: ["LEAVES", "store/shared"] },
  "store/runs": { imports: ["LEAVES", "store/shared"], types: ["store/tick"] },
  "store/admin": { imports: ["LEAVES", "store/shared", "store/runs"], types: ["flow", "job.ts"] },
  tick: { imports: ["LEAVES", "DOMAIN", "store/tick"], types: ["store/shared", "settings", "observe"] },
  "enqueue.ts": { imports: ["LEAVES", "enqueue-prepare.ts", "store/enqueue"], types: ["job.ts", "settings", "store/shared"] },
  "enqueue-prepare.ts": { imports: ["LEAVES", "DOMAIN"], types: ["enqueue.ts", "settings", "store/enqueue"] },
  admin: { imports: ["LEAVES", "DOMAIN", "store/admin", "store/runs", "migrate.ts"], types: ["store/shared", "enqueue.ts"] },
  schedules: { imports: ["LEAVES", "DOMAIN", "store/schedules", "store/shared"], types: ["settings", "tick"] },
  observe: { imports: ["LEAVES"], types: ["tick", "store/tick"] },
  "migrate.ts": { imports: ["LEAVES", "store/shared", "migrations.node.ts", "migrations.elsewhere.ts", "migrations.latest.ts"] },
  "migrations.latest.ts": { imports: [] },
  // What #migrations gives: the migrations and their runner (Node), or stand-ins (a Worker).
  "migrations.node.ts": { imports: ["migrations.generated.ts", "migrate-run.ts"] },
  "migrate-run.ts": { imports: ["LEAVES", "store/shared", "migrations.generated.ts"], types: ["migrate.ts"] },
  "migrations.generated.ts": { imports: [], types: ["migrate.ts"] },
  "migrations.elsewhere.ts": { imports: ["LEAVES"], types: ["migrate.ts"] },
  "jobs.ts": { imports: ["LEAVES", "DOMAIN", "settings", "enqueue.ts", "admin", "tick", "schedules", "observe", "migrate.ts", "store/shared"] },
  "index.ts": { imports: ["LEAVES", "DOMAIN", "settings", "jobs.ts", "migrate.ts", "schedules", "STORE", "observe"], types: ["admin", "tick", "observe", "enqueue.ts"] },
  http: { imports: ["LEAVES", "settings", "payload.ts", "READS"], types: ["job.ts", "jobs.ts", "enqueue.ts", "tick"] },
  // Its login is recorded through src/admin, like every other statement a presentation unit makes.
  dashboard: { imports: ["LEAVES", "settings", "READS", "admin/login.ts"], types: ["jobs.ts", "schedules", "flow"] },
  client: { imports: ["http/route-table.ts", "json-limits.ts"], types: ["enqueue.ts", "job.ts", "jobs.ts", "schedules", "READS", "http"] },
  module: { imports: ["LEAVES", "settings", "jobs.ts", "exit-codes.ts"], types: ["job.ts", "observe", "schedules"] },
  platform: { imports: ["LEAVES", "settings", "http", "module", "tick/live.ts"], types: ["tick"] },
  otel: { imports: ["observe"], types: ["observe", "tick"] },
  cli: { imports: ["LEAVES", "settings", "module", "migrate.ts", "dev/paths.ts", "http/tick-request.ts", "READS", "exit-codes.ts"], types: ["jobs.ts", "enqueue.ts", "schedules", "admin", "flow"] },
  dev: { imports: ["LEAVES", "settings", "module", "http", "platform", "exit-codes.ts", "dashboard/dashboard-settings.ts"], types: ["tick"] },
  // Only the package's entry points (checked on their own below).
  functions: { imports: [] },
};

/** Units that show or serve the queue: they reach the store only for types and constants (statements go through src/admin or jobs). */
const PRESENTATION = ["http", "dashboard", "cli", "client", "dev", "platform", "module"];

/** Edges the folder table forbids that are the design: the dashboard's public surface, mounted by the HTTP app. */
const SEAMS: readonly Exception[] = [
  { from: "http/api-app.ts", to: "dashboard/dashboard-app.tsx", why: "pgtick/http is the API and the dashboard as one app: createApp mounts it at /dashboard" },
  { from: "http/api-app.ts", to: "dashboard/favicon.ts", why: "the app serves the dashboard's icon at /favicon.ico too" },
  { from: "http/index.ts", to: "dashboard/dashboard-app.tsx", why: "pgtick/http exports createDashboard for apps that mount the dashboard alone" },
];

/** Edges that break a rule today, to be fixed in src (see ARCHITECTURE.md, "Known violations"). */
const VIOLATIONS: readonly Exception[] = [
];

/** Files outside src/store that may hold SQL: the migrator and the migrations it ships. */
const SQL_OUTSIDE_STORE = ["migrate.ts", "migrate-run.ts", "migrations.generated.ts"];
const SQL_VIOLATIONS: readonly string[] = [];

/** Package -> the units that may import it ("node:" stands for every Node built-in). */
const PACKAGES: Record<string, readonly string[]> = {
  zod: ["job.ts", "payload.ts", "tick", "http", "functions"],
  hono: ["http", "dashboard", "platform"],
  "@hono/node-server": ["dev"],
  pg: ["platform", "cli", "dev"],
  "@neondatabase/serverless": ["platform"],
  "@vercel/functions": ["platform"],
  "@opentelemetry/api": ["otel"],
  tsx: ["cli"],
  "node:": ["cli", "dev", "module"],
  pgtick: ["functions"],
};

const OPERATOR_ONLY = ["src/cli/", "src/dev/", "src/module/load-module.ts", "src/otel/", "src/client/"];

/** What each public entry point may pull in (its runtime imports, followed from the entry). */
const ENTRIES: readonly EntryRule[] = [
  { entry: "pgtick/client", condition: "default", only: ["src/client/", "src/http/route-table.ts", "src/json-limits.ts"], packages: [] },
  { entry: "pgtick/otel", condition: "default", only: ["src/otel/", "src/observe/", "src/error-text.ts"], packages: ["@opentelemetry/api"] },
  { entry: "pgtick", condition: "default", never: [...OPERATOR_ONLY, "src/http/", "src/dashboard/", "src/platform/", "src/module/"], packages: ["zod"] },
  { entry: "pgtick/http", condition: "default", only: ["src/http/", "src/dashboard/", ...LEAVES.map((l) => `src/${l}`), "src/settings/", "src/payload.ts", "src/job.ts", "src/flow/", "src/admin/login.ts", "src/store/admin/", "src/store/runs/", "src/store/shared/"], packages: ["hono", "zod"] },
  { entry: "pgtick/cloudflare", condition: "workerd", never: [...OPERATOR_ONLY, "src/migrations.generated.ts"], packages: ["hono", "zod", "@neondatabase/serverless"] },
  { entry: "pgtick/vercel", condition: "default", never: OPERATOR_ONLY, packages: ["hono", "zod", "@neondatabase/serverless", "@vercel/functions"] },
  { entry: "pgtick/vercel/tick", condition: "default", never: OPERATOR_ONLY, packages: ["hono", "zod", "pg", "@vercel/functions"] },
];

const LAYOUT: LayoutRules = {
  groups: GROUPS, rules: RULES, seams: SEAMS, violations: VIOLATIONS, presentation: PRESENTATION, packages: PACKAGES, sqlViolations: SQL_VIOLATIONS,
};

// ---------------------------------------------------------------------------------------------

const graph = readGraph(ROOT);

describe("layout", () => {
  it("every unit of src/ has a row in the rules table, and every row a unit", () => {
    const units = new Set(graph.files.map(unitOf));
    expect([...units].filter((u) => !RULES[u]).sort()).toEqual([]);
    expect(Object.keys(RULES).filter((u) => !units.has(u)).sort()).toEqual([]);
  });

  it("imports between units follow the table (seams and known violations listed)", () => {
    expect(edgeViolations(LAYOUT, graph)).toEqual([]);
  });

  it("presentation units take only types and constants from the store", () => {
    expect(storeNameViolations(LAYOUT, graph)).toEqual([]);
  });

  it("packages are imported only where the table says", () => {
    expect(packageViolations(LAYOUT, graph)).toEqual([]);
  });

  it("what the entry points and the pgtick bin import at run time is a dependency, not a devDependency", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;
    const installed = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]);
    const needed = new Set(ENTRIES.flatMap((e) => e.packages));
    // The bin loads the TypeScript CLI through tsx: without it, `npx pgtick` fails where only dependencies are installed.
    const bin = readFileSync(join(ROOT, "src/cli/bin.mjs"), "utf8");
    for (const m of bin.matchAll(/from "(?!node:)([^"./][^"]*)"/g)) needed.add(m[1]!.startsWith("@") ? m[1]!.split("/").slice(0, 2).join("/") : m[1]!.split("/")[0]!);
    expect(needed.has("tsx")).toBe(true);
    expect([...needed].filter((p) => !installed.has(p))).toEqual([]);
  });

  it("functions/ import only package entry points", () => {
    expect(functionsViolations(graph)).toEqual([]);
    // They do use them: a path import would have been the other way to reach the code.
    expect(graph.edges.filter((e) => e.from.startsWith("functions/") && e.spec.startsWith("pgtick")).length).toBeGreaterThan(0);
  });

  it("only src/migrate.ts takes the migrations, through #migrations", () => {
    expect(migrationViolations(graph)).toEqual([]);
  });

  it("SQL lives in src/store (and the migrator)", () => {
    expect(sqlOutsideStore(graph).filter((f) => !SQL_OUTSIDE_STORE.includes(f) && !SQL_VIOLATIONS.includes(f))).toEqual([]);
  });

  it.each(ENTRIES.map((r) => [r.entry, r] as const))("%s pulls in only what its row allows", (_entry, rule) => {
    expect(entryViolations(graph, rule)).toEqual([]);
  });

  it(`no file under src/ is over ${MAX_LINES} lines`, () => {
    expect(longFiles(ROOT, MAX_LINES)).toEqual([]);
  });

  it("no declaration carries two doc comments (the first would be lost in editors and in the .d.ts)", () => {
    expect(stackedDocComments(ROOT)).toEqual([]);
  });

  it("every seam and known violation is still needed", () => {
    expect(staleExceptions(LAYOUT, graph)).toEqual([]);
  });

  it("ARCHITECTURE.md mirrors the tables", () => {
    const doc = readFileSync(join(ROOT, "ARCHITECTURE.md"), "utf8");
    const block = (name: string) => {
      const m = new RegExp(`<!-- layout:${name} -->([\\s\\S]*?)<!-- /layout:${name} -->`).exec(doc);
      if (!m) throw new Error(`ARCHITECTURE.md has no layout:${name} block`);
      return m[1]!.split("\n").filter((l) => l.startsWith("|") && !/^\|\s*-/.test(l)).slice(1)
        .map((l) => l.split("|").slice(1, -1).map((c) => c.trim()));
    };
    const list = (cell: string | undefined) => (cell ?? "").split(",").map((s) => s.replace(/`/g, "").trim()).filter((s) => s && s !== "-").sort();
    const cleanUnit = (cell: string) => cell.replace(/`/g, "").replace(/^src\//, "").replace(/\/$/, "");
    expect(Object.fromEntries(block("groups").map(([g, members]) => [cleanUnit(g!), list(members)]))).toEqual(
      Object.fromEntries(Object.entries(GROUPS).map(([g, m]) => [g, [...m].sort()])),
    );
    expect(Object.fromEntries(block("rules").map(([u, imports, types]) => [cleanUnit(u!), { imports: list(imports), types: list(types) }]))).toEqual(
      Object.fromEntries(Object.entries(RULES).map(([u, r]) => [u, { imports: [...r.imports].sort(), types: [...(r.types ?? [])].sort() }])),
    );
    expect(block("exceptions").map(([from, to]) => `${list(from)[0]} -> ${list(to)[0]}`).sort()).toEqual(
      [...SEAMS, ...VIOLATIONS].map((x) => `${x.from} -> ${x.to}`).sort(),
    );
  });
});

describe("the layout checks find what they look for", () => {
  // A small tree with one offence of each kind, so a check that silently matches nothing fails here.
  const root = mkdtempSync(join(tmpdir(), "pgtick-layout-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const put = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  put("package.json", JSON.stringify({ exports: { ".": "./src/index.ts", "./client": { "pgtick-source": "./src/client/index.ts", default: "./dist/client/index.js" } }, imports: { "#migrations": { default: "./src/migrations.generated.ts" } } }));
  put("src/index.ts", `export { x } from "./http/app.js";\n`);
  put("src/store/tick/step.ts", `import { x } from "../../http/app.js";\nimport type { Y } from "../../tick/loop.js";\nexport const s = x;\n`);
  put("src/http/app.ts", `import { getJob, MAX } from "../store/admin/get.js";\nimport pg from "pg";\nexport const x = [getJob, MAX, pg];\n${"// filler\n".repeat(MAX_LINES)}`);
  put("src/store/admin/get.ts", `export const getJob = 1;\nexport const MAX = 2;\n`);
  put("src/tick/loop.ts", `import type { D } from "../dashboard/page.js";\nimport { missing } from "./nowhere.js";\nexport type Y = D;\n`);
  put("src/dashboard/page.ts", `export type D = string;\nexport const q = \`SELECT id FROM queue\`;\n`);
  put("src/client/index.ts", `import { x } from "../http/app.js";\nexport { x };\n`);
  put("src/migrations.generated.ts", `export const migrations = [];\n`);
  put("src/jobs.ts", `import { migrations } from "./migrations.generated.js";\nexport const m = migrations;\n`);
  put("functions/worker.ts", `import { createJobs } from "../src/jobs.js";\nimport { y } from "pgtick/vercel";\n// import { z } from "../src/not-an-import.js";\nexport default [createJobs, y];\n`);
  const fake = readGraph(root);

  it("forbidden imports, including a type-only one, and one that does not resolve", () => {
    expect(edgeViolations(LAYOUT, fake)).toEqual([
      "functions/worker.ts:1 imports src/jobs.ts (functions -> jobs.ts is not in the table)",
      "src/client/index.ts:1 imports src/http/app.ts (client -> http: types only)",
      "src/index.ts:1 imports src/http/app.ts (index.ts -> http is not in the table)",
      "src/jobs.ts:1 imports src/migrations.generated.ts (jobs.ts -> migrations.generated.ts is not in the table)",
      "src/store/tick/step.ts:1 imports src/http/app.ts (store/tick -> http is not in the table)",
      "src/store/tick/step.ts:2 imports src/tick/loop.ts (store/tick -> tick is not in the table)",
      "src/tick/loop.ts:1 imports src/dashboard/page.ts (tick -> dashboard is not in the table)",
      "src/tick/loop.ts:2 imports ./nowhere.js, which does not resolve",
    ]);
  });

  it("a store call from a presentation unit, a package out of place, a path out of functions/, migrations by path", () => {
    expect(storeNameViolations(LAYOUT, fake)).toEqual(["src/http/app.ts:1 takes getJob from src/store/admin/get.ts: the store is reached here for types and constants only"]);
    expect(packageViolations(LAYOUT, fake)).toEqual(["src/http/app.ts:2 imports pg: pg is for platform, cli, dev only"]);
    expect(functionsViolations(fake)).toEqual([
      `functions/worker.ts:1 imports ../src/jobs.js: functions/ use "pgtick/..." entry points, never a path out of functions/`,
      "functions/worker.ts:2 imports pgtick/vercel: not an entry point of package.json exports",
    ]);
    expect(migrationViolations(fake)).toEqual([
      "src/jobs.ts:1 imports src/migrations.generated.ts by path: use #migrations, whose workerd condition keeps the SQL out of the Worker",
    ]);
  });

  it("SQL outside the store, what an entry point pulls in, a long file", () => {
    expect(sqlOutsideStore(fake)).toEqual(["dashboard/page.ts"]);
    const client = entryViolations(fake, { entry: "pgtick/client", condition: "default", only: ["src/client/"], packages: [] });
    expect(client).toEqual(["pgtick/client pulls in src/http/app.ts", "pgtick/client pulls in src/store/admin/get.ts", "pgtick/client pulls in the package pg"]);
    expect(longFiles(root, MAX_LINES)).toEqual([`src/http/app.ts: ${MAX_LINES + 3} lines (at most ${MAX_LINES})`]);
  });
});
