// The Cloudflare Worker: `fetch` serves the API and the dashboard, `scheduled` runs the minute tick.
import { cloudflareWorker } from "pgtick/cloudflare";
import * as app from "../jobs.js";

export default cloudflareWorker(app);
