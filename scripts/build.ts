// `npm run build` (and `prepack`, so `npm pack` and `npm publish` run it): the package as an app installs
// it, in dist/ (git-ignored). JavaScript and .d.ts from tsconfig.build.json (the installed `pgtick`
// executable, src/cli/bin.mjs, runs dist/cli/), and dist/package.json, whose "imports" give dist/migrate.js
// its `#migrations` (Node and the bundlers take `#` imports from the nearest package.json: the root's map
// is the sources', which the package does not ship). The SQL of dist/store/ is compacted (scripts/compact-sql.ts).
// Nothing in this repository runs from dist/ (the "pgtick-source" condition resolves its `pgtick` imports to
// src/), but the Worker is bundled from such a build, as an app's is (`npm run build:worker`, into .wrangler/pkg/).
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { compactSqlIn } from "./compact-sql.js";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
const DIST = join(ROOT, "dist");

type Targets = string | { [condition: string]: Targets };

/** A target of the root's map (`./src/x.ts`) as dist/package.json names it (`./x.js`). */
const inDist = (targets: Targets): Targets => {
  if (typeof targets !== "string") return Object.fromEntries(Object.entries(targets).map(([condition, t]) => [condition, inDist(t)]));
  if (!/^\.\/src\/.+\.tsx?$/.test(targets)) throw new Error(`package.json "imports": ${targets} is not a file under src/`);
  return targets.replace(/^\.\/src\//, "./").replace(/\.tsx?$/, ".js");
};

/** The dashboard's stylesheet without its line breaks (none is inside a CSS string): about 60 bytes of a Worker's gzipped bundle. */
const compactCss = (file: string): void => {
  const code = readFileSync(file, "utf8");
  const start = code.indexOf("`\n:root{");
  const end = code.indexOf("`", start + 1);
  if (start < 0 || end < 0) throw new Error(`${file}: the stylesheet's template literal was not found`);
  writeFileSync(file, code.slice(0, start) + code.slice(start, end).replace(/\n\s*/g, "") + code.slice(end));
};

export const buildPackage = (out = DIST): void => {
  rmSync(out, { recursive: true, force: true });
  execFileSync(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(ROOT, "tsconfig.build.json"), "--outDir", out], { cwd: ROOT, stdio: "inherit" });
  compactSqlIn(join(out, "store"));
  compactCss(join(out, "dashboard", "style.js"));
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { type?: string; imports?: Record<string, Targets> };
  const imports = Object.fromEntries(Object.entries(pkg.imports ?? {}).map(([name, targets]) => [name, inDist(targets)]));
  writeFileSync(join(out, "package.json"), `${JSON.stringify({ type: pkg.type, imports }, null, 2)}\n`);
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) buildPackage(process.argv[2] ? resolve(process.argv[2]) : undefined);
