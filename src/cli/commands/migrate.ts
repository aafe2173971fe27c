import { appliedVersions } from "../../migrate.js";
import type { CommandSpec } from "../command.js";

export const migrateCommand: CommandSpec = {
  path: ["migrate"],
  summary: "Create or update the tables (safe to run from many places at once)",
  maxArgs: 0,
  details: "Uses DATABASE_URL and JOBS_TABLE_PREFIX. Running it again when up to date changes nothing.",
  async run(session) {
    const jobs = await session.jobs("none", "migrate");
    const applied = await jobs.migrate();
    const versions = await appliedVersions(jobs.db, jobs.settings.tablePrefix);
    session.print({ applied, versions, prefix: jobs.settings.tablePrefix }, () =>
      applied.length > 0
        ? `applied migration${applied.length === 1 ? "" : "s"} ${applied.join(", ")} (tables ${jobs.settings.tablePrefix}*)`
        : `up to date: migrations ${versions.join(", ")} already applied (tables ${jobs.settings.tablePrefix}*)`,
    );
  },
};
