// Vercel's build step (vercel.json "buildCommand": `npm run build:vercel`): bundles the
// thin entrypoints in functions/vercel/ with our own sources into functions/vercel/dist/,
// which api/ re-exports. Vercel's own compiler traces `.js` imports to `.ts` files but
// not to `.tsx` (the dashboard), so the functions ship our code pre-bundled; packages
// stay external and Vercel traces and bundles them as usual.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type BuildOptions } from "esbuild";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));

// The package's dependencies and peer dependencies (hono, zod) stay external (Vercel traces and
// bundles them); its own entry points (`pgtick/vercel`, imported by the functions as a user's app
// would) are bundled from source: the "pgtick-source" condition of package.json "exports" (an app's
// bundler gets the package's dist/).
const pkg = JSON.parse(readFileSync(resolve(ROOT, "package.json"), "utf8")) as Record<"dependencies" | "peerDependencies", Record<string, string>>;
const dependencies = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)];

export const buildVercel = async (): Promise<void> => {
  const common: BuildOptions = {
    bundle: true,
    format: "esm",
    external: dependencies.flatMap((d) => [d, `${d}/*`]),
    target: "es2022",
    jsx: "automatic",
    jsxImportSource: "hono/jsx",
    conditions: ["pgtick-source"],
    logLevel: "warning",
    absWorkingDir: ROOT,
  };
  await Promise.all([
    build({ ...common, entryPoints: ["functions/vercel/tick.ts"], outfile: "functions/vercel/dist/tick.js", platform: "node" }),
    build({ ...common, entryPoints: ["functions/vercel/api.ts"], outfile: "functions/vercel/dist/api.js", platform: "neutral", mainFields: ["module", "main"] }),
  ]);
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await buildVercel();
