#!/usr/bin/env node
// The `pgtick` executable: the CLI is TypeScript, loaded through tsx's hooks, ESM and CommonJS both
// (as `node --import tsx` does), so a jobs module written in TypeScript loads the same way wherever it
// lives: a `.ts` file in a package without "type": "module" is CommonJS to Node.
import { register as registerCommonJs } from "tsx/cjs/api";
import { register } from "tsx/esm/api";

registerCommonJs();
register();
await import("./pgtick.ts");
