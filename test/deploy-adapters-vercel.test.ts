// The shared adapter suite on Vercel: the functions served over real HTTP in Node, as Vercel's
// front end would, routed as vercel.json routes. The same checks run on Cloudflare in
// deploy-adapters-cloudflare.test.ts; a file per platform, so only that one builds the worker.
import { deployments } from "./support/deploy-fixture.js";
import { adapterSuite, fleetSuite } from "./support/deploy-suites.js";

const { vercel } = deployments();

adapterSuite("vercel", vercel);
fleetSuite("vercel", vercel);
