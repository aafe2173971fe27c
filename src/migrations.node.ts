// What `#migrations` gives every runtime but a Worker (package.json's "imports"): the migrations and
// their runner. A Worker gets migrations.elsewhere.ts instead.
export { migrations } from "./migrations.generated.js";
export { migrate, migrationStatement } from "./migrate-run.js";
