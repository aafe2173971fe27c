// The JSON API and the dashboard, on Vercel's Edge runtime (api/index.js re-exports it).
import { vercelApi } from "pgtick/vercel";
import * as app from "../jobs.js";

export default vercelApi(app);
