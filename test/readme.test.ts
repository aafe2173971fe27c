// The README says what the code does: its settings tables are rendered from the settings
// catalog, its marked examples are extracted into examples/readme/ (type-checked by
// `npm run typecheck`), and the runnable ones run here against a real PostgreSQL.
import { execFile, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, describe, expect, it, vi } from "vitest";
import { EXAMPLES_DIR, exampleFile, exampleSource, examplesOf, README, withSettingsTables } from "../scripts/gen-readme.js";
import { EVERY_VAR } from "../src/settings/dev-catalog.js";
import { freshDatabase } from "./support/db.js";
import { FROM_SOURCE, isolatedEnv } from "./support/isolated-env.js";
import { freePort } from "./support/postgres.js";

const text = readFileSync(README, "utf8");
const examples = examplesOf(text);

describe("the README", () => {
  it("shows the settings tables as src/settings/catalog.ts has them (npm run gen:readme)", () => {
    expect(withSettingsTables(text)).toBe(text);
    // Every variable the project reads appears in one of them.
    for (const name of Object.keys(EVERY_VAR)) expect(text, name).toContain(`| \`${name}\` |`);
  });

  it("has its examples in examples/readme, as extracted (npm run gen:readme)", () => {
    expect(examples.length).toBeGreaterThanOrEqual(8);
    expect(readdirSync(EXAMPLES_DIR).sort()).toEqual(examples.map((e) => exampleFile(e)).sort());
    for (const e of examples) expect(readFileSync(`${EXAMPLES_DIR}/${exampleFile(e)}`, "utf8"), e.name).toBe(exampleSource(e));
  });
});

describe("the README's runnable examples", () => {
  const dropped: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const drop of dropped) await drop();
  });

  it.each(examples.filter((e) => e.run).map((e) => [e.name, e] as const))("%s runs against a real PostgreSQL", async (_name, e) => {
    const database = await freshDatabase(`readme_${e.name.replace(/-/g, "_")}`);
    dropped.push(database.drop);
    const logged: unknown[][] = [];
    // The library's default logger writes JSON lines to console.log too: those are not the example's own output.
    const ownOutput = (args: unknown[]) => !(typeof args[0] === "string" && args[0].startsWith('{"time":'));
    const log = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void (ownOutput(args) && logged.push(args)));
    const before = process.env.DATABASE_URL;
    process.env.DATABASE_URL = database.url;
    try {
      await import(`${EXAMPLES_DIR}/${exampleFile(e)}`);
    } finally {
      process.env.DATABASE_URL = before;
      log.mockRestore();
    }
    // What the examples print is what their comments say.
    if (e.name === "library") expect(logged[0]).toEqual([2, { messageId: expect.stringMatching(/^m-/) }]);
    if (e.name === "flow-control") expect(logged).toEqual([[true, true], [5], [null]]);
    if (e.name === "history") {
      expect(logged[0]).toEqual(["succeeded", { url: "https://img.example/a.png?w=200", bytes: 1234 }]);
      expect(logged[1]).toEqual([["retried", "succeeded"]]);
      expect(logged[2]).toEqual([["resizing"]]);
    }
  }, 60_000);
});

describe("the README's HTTP server and client examples", () => {
  it("run together as written: the client's job runs through the server's own ticks, and its typed result prints true", async () => {
    const database = await freshDatabase("readme_http_pair");
    const port = await freePort();
    const env = isolatedEnv({ DATABASE_URL: database.url, PORT: String(port), JOBS_API_TOKEN: "readme-token-0123456789", CRON_SECRET: "readme-cron-0123456789" });
    const server = spawn(process.execPath, [...FROM_SOURCE, `${EXAMPLES_DIR}/http-server.ts`], { env, stdio: ["ignore", "ignore", "pipe"] });
    let serverErrors = "";
    server.stderr!.on("data", (d: Buffer) => (serverErrors += d.toString()));
    try {
      await expect.poll(() => fetch(`http://127.0.0.1:${port}/api/health`).then((r) => r.status, () => 0), { timeout: 30_000, interval: 200 }).toBe(200);
      const client = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
        execFile(process.execPath, [...FROM_SOURCE, `${EXAMPLES_DIR}/client.ts`], { env: { ...env, API_URL: `http://127.0.0.1:${port}` }, timeout: 50_000 }, (error, stdout, stderr) =>
          done({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
        );
      });
      expect(client).toMatchObject({ code: 0, stdout: "true\n" });
      expect(serverErrors).toBe("");
    } finally {
      server.kill("SIGTERM");
      await new Promise((done) => (server.exitCode !== null ? done(null) : server.once("exit", done)));
      await database.drop();
    }
  }, 90_000);
});
