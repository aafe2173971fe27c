import { appliedVersions } from "../../migrate.js";
import type { CommandSpec } from "../command.js";
import { CliError, EXIT, exitCodeFor, oneLine } from "../../exit-codes.js";

/** How long `pgtick migrate` waits for its migration statement. */
export const MIGRATE_BOUND_MS = 10 * 60_000;

export const migrateCommand: CommandSpec = {
  path: ["migrate"],
  summary: "Create or update the tables (safe to run from many places at once)",
  maxArgs: 0,
  details:
    "Uses DATABASE_URL and JOBS_TABLE_PREFIX. Running it again when up to date changes nothing. With a jobs module (--jobs, JOBS_MODULE, or the folder's functions/jobs.ts), then runs its setup(db), which makes the app's own tables.",
  async run(session) {
    const mod = await session.module("none", "migrate");
    const jobs = await session.jobs("none", "migrate");
    // Bounded, so a database that stops answering mid-migration (a frozen connection) ends the command with
    // exit 7, having applied nothing; long enough for a migration that builds an index over a deep queue.
    const applied = await jobs.migrate({ timeoutMs: MIGRATE_BOUND_MS });
    const versions = await appliedVersions(jobs.db, jobs.settings.tablePrefix);
    const setup = mod?.setup !== undefined;
    if (mod?.setup) {
      try {
        await mod.setup(jobs.db);
      } catch (e) {
        // Said as what it is: the library's tables are done, the module's own setup is not.
        throw new CliError(exitCodeFor(e) === EXIT.unreachable ? EXIT.unreachable : EXIT.failed, `the jobs module's setup(db) failed, after the library's migrations were applied: ${oneLine(e)}`);
      }
    }
    const tables = `tables ${jobs.settings.tablePrefix}*${setup ? "; ran the jobs module's setup" : ""}`;
    session.print({ applied, versions, prefix: jobs.settings.tablePrefix, setup }, () =>
      applied.length > 0
        ? `applied migration${applied.length === 1 ? "" : "s"} ${applied.join(", ")} (${tables})`
        : `up to date: migrations ${versions.join(", ")} already applied (${tables})`,
    );
  },
};
