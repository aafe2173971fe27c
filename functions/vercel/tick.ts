// Vercel Cron's target and the tick function, on the Node.js runtime (api/tick.js re-exports it).
import { vercelTick } from "pgtick/vercel/tick";
import * as app from "../jobs.js";

export const { GET, POST } = vercelTick(app);
