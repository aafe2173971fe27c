export { GET, POST } from "../functions/vercel/dist/tick.js";
