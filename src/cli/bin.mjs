#!/usr/bin/env node
// The `pgtick` executable: the CLI is TypeScript, loaded through tsx's ESM hooks
// (so a jobs module written in TypeScript loads the same way).
import { register } from "tsx/esm/api";

register();
await import("./pgtick.ts");
