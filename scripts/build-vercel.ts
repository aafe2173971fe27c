// Vercel's build step (vercel.json "buildCommand": `npm run build:vercel`): bundles the
// thin entrypoints in functions/vercel/ with our own sources into functions/vercel/dist/,
// which api/ re-exports. Vercel's own compiler traces `.js` imports to `.ts` files but
// not to `.tsx` (the dashboard), so the functions ship our code pre-bundled; packages
// stay external and Vercel traces and bundles them as usual.
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));

export const buildVercel = async (): Promise<void> => {
  const common = {
    bundle: true,
    format: "esm",
    packages: "external",
    target: "es2022",
    jsx: "automatic",
    jsxImportSource: "hono/jsx",
    logLevel: "warning",
    absWorkingDir: ROOT,
  } as const;
  await Promise.all([
    build({ ...common, entryPoints: ["functions/vercel/tick.ts"], outfile: "functions/vercel/dist/tick.js", platform: "node" }),
    build({ ...common, entryPoints: ["functions/vercel/api.ts"], outfile: "functions/vercel/dist/api.js", platform: "neutral", mainFields: ["module", "main"] }),
  ]);
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await buildVercel();
