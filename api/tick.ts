export { GET, POST } from "../functions/vercel/tick.js";
