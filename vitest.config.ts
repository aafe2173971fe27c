import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // `pgtick/...` imports (functions/, examples/) resolve to the sources, as with tsconfig.json's customConditions.
  // Added to vitest's own server conditions; vitest also hands them to its workers as Node's --conditions.
  ssr: { resolve: { conditions: ["pgtick-source"] } },
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    // Each file gets its own database, so files run in parallel against one server.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most files wait on timers, child processes and the server rather than the CPU: two at a time
    // even on two cores (vitest's default there is one), which takes about a third off the run.
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
