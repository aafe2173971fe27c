#!/usr/bin/env node
// The `pgtick` executable: the CLI is TypeScript, loaded through tsx's hooks, ESM and CommonJS both
// (as `node --import tsx` does), so a jobs module written in TypeScript loads the same way wherever it
// lives: a `.ts` file in a package without "type": "module" is CommonJS to Node.
import { existsSync } from "node:fs";
import { register as registerHooks } from "node:module";
import { register as registerCommonJs } from "tsx/cjs/api";
import { register } from "tsx/esm/api";

registerCommonJs();
register();
if (existsSync(new URL("./pgtick.ts", import.meta.url))) {
  // In this repository (`npx pgtick`, `npm run migrate:deploy`, the tests): the CLI's sources, and a jobs
  // module's `pgtick` imports resolve to the sources too (package.json's "pgtick-source" condition), not to
  // a dist/ that may be stale or not built.
  registerHooks("data:text/javascript,export const resolve = (specifier, context, next) => next(specifier, { ...context, conditions: [...context.conditions, 'pgtick-source'] });");
  await import("./pgtick.ts");
} else {
  // Installed: the package ships this file and the compiled CLI, which a jobs module's `pgtick` imports share.
  await import(new URL("../../dist/cli/pgtick.js", import.meta.url).href);
}
