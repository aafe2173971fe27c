// The shared adapter suite on Cloudflare: the worker bundle wrangler would upload, run in Miniflare.
// The bundle is built into one fixed folder (.wrangler/bundle), so this is the only test file
// that builds it; the same checks run on Vercel in deploy-adapters-vercel.test.ts.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { deployments } from "./support/deploy-fixture.js";
import { adapterSuite, fleetSuite } from "./support/deploy-suites.js";
import { workerBuild } from "./support/miniflare.js";

const { cloudflare } = deployments();

describe("the worker bundle", () => {
  it("is what wrangler uploads, and stays under the 150,000-byte gzip goal (the README gives the measured size)", async () => {
    const build = await workerBuild();
    console.log(`worker bundle: ${build.bytes} bytes, gzip ${build.gzipBytes} bytes`);
    expect(build.gzipBytes).toBeLessThan(150_000);
    // Migrations run from Node before a deploy: their SQL is not shipped in the Worker.
    const code = readFileSync(build.scriptPath, "utf8");
    expect(code).not.toContain("CREATE TABLE {{prefix}}queue");
    expect(code).toContain("migrations do not run inside a Cloudflare Worker");
    // The build compiles the package first (about 12 s alone; on a busy machine more than twice that).
  }, 120_000);
});

adapterSuite("cloudflare", cloudflare);
fleetSuite("cloudflare", cloudflare);
