import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    // Each file gets its own database, so files run in parallel against one server.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
