#!/usr/bin/env node
// The `pgtick` executable: the CLI is TypeScript, loaded through tsx's hooks, ESM and CommonJS both
// (as `node --import tsx` does), so a jobs module written in TypeScript loads the same way wherever it
// lives: a `.ts` file in a package without "type": "module" is CommonJS to Node. Installed, this file is
// dist/cli/bin.mjs and the CLI is compiled; in this repository it is src/cli/bin.mjs and the CLI is the source.
import { existsSync } from "node:fs";
import { register as registerHooks } from "node:module";
import { register as registerCommonJs } from "tsx/cjs/api";
import { register } from "tsx/esm/api";

registerCommonJs();
register();
// Run from the sources: a jobs module's `pgtick` imports resolve to the sources as well (package.json's
// "pgtick-source" condition), not to a dist/ that may be stale or not built. Installed, they resolve to
// the package's dist/, where this CLI is.
if (existsSync(new URL("./pgtick.ts", import.meta.url))) {
  registerHooks("data:text/javascript,export const resolve = (specifier, context, next) => next(specifier, { ...context, conditions: [...context.conditions, 'pgtick-source'] });");
}
await import("./pgtick.js");
