// Vercel reads `config` from the entry file itself, so it is declared here, not re-exported.
export const config = { runtime: "edge" };
export { default } from "../functions/vercel/dist/api.js";
