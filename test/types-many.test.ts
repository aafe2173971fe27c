// An app with thousands of typed jobs: its calls must compile. `enqueue` and `enqueueMany` took a union of
// every job's arguments, each with its schema's input type: at 2,000 jobs TypeScript gave up on them
// (TS2589, 5.4 million instantiations in one statement). A call naming one job now types that job only.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");

it("compiles enqueue and enqueueMany calls of an app with 2,000 typed jobs, (test/types.test.ts: a wrong payload is still refused)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pgtick-types-"));
  try {
    const lines = [
      `import { z } from ${JSON.stringify(join(ROOT, "node_modules/zod/index.js"))};`,
      `import { createJobs, defineJob } from ${JSON.stringify(join(ROOT, "src/index.js"))};`,
      ...Array.from({ length: 2_000 }, (_, i) => `const j${i} = defineJob({ name: "app.job-${i}", schema: z.object({ user: z.string() }), handler: async () => {} });`),
      `declare const db: { query(text: string, params?: unknown[]): Promise<{ rows: never[]; rowCount: number }> };`,
      `const jobs = createJobs({ db, jobs: [${Array.from({ length: 2_000 }, (_, i) => `j${i}`).join(", ")}] as const });`,
      `export const one = () => jobs.enqueue("app.job-1999", { user: "x" });`,
      `export const many = () => jobs.enqueueMany([{ job: "app.job-0", payload: { user: "y" } }, { job: "app.job-7", payload: { user: "z" }, delayMs: 5 }]);`,
    ];
    writeFileSync(join(dir, "app.ts"), lines.join("\n"));
    const compilerOptions = { noEmit: true, strict: true, skipLibCheck: true, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", types: ["node"], typeRoots: [join(ROOT, "node_modules/@types")], lib: ["ES2023", "DOM"], customConditions: ["pgtick-source"] };
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["app.ts"] }));
    const run = await promisify(execFile)(join(ROOT, "node_modules/.bin/tsc"), ["-p", join(dir, "tsconfig.json")], { cwd: ROOT }).then(
      () => ({ code: 0, out: "" }),
      (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
    );
    expect(run).toEqual({ code: 0, out: "" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
