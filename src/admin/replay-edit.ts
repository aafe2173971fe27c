import type { Db } from "../db.js";
import { flowKeysFor } from "../flow/keys.js";
import type { AnyJob } from "../job.js";
import { replayKeys } from "./replay-keys.js";
import { checkPayload } from "../payload.js";
import { getDeadLetter } from "../store/admin/dead-letter-get.js";
import type { ReplayEdit } from "../store/admin/replay.js";
import type { Tables } from "../store/shared/tables.js";

/**
 * An edited payload for a dead letter's replay, checked as an enqueue would check it: against the
 * schema of the dead letter's job (`invalid_payload`, `unknown_job`) and the size limit
 * (`payload_too_large`), with the keys of the job's limits computed from it. Null when there is
 * no such dead letter. Reads the dead letter; the replay itself is one statement after it.
 */
export const replayEdit = async (
  db: Db,
  t: Tables,
  id: string,
  payload: unknown,
  registry: ReadonlyMap<string, AnyJob>,
  maxPayloadBytes: number,
): Promise<ReplayEdit | null> => {
  const dead = await getDeadLetter(db, t, id);
  if (!dead) return null;
  const { job, stored, parsed } = checkPayload(registry, dead.job, payload, maxPayloadBytes);
  return { jobName: dead.job, replays: dead.replays, payload: JSON.stringify(stored), keys: flowKeysFor(job, parsed) };
};

/**
 * A replay of a dead letter as it is, when some job has limits: its keys as the code computes them
 * now (see replay-keys.ts). Null when there is no such dead letter.
 */
export const replayAsIs = async (db: Db, t: Tables, id: string, registry: ReadonlyMap<string, AnyJob>): Promise<ReplayEdit | null> => {
  const dead = await getDeadLetter(db, t, id);
  if (!dead) return null;
  const keys = replayKeys(registry, dead.job, dead.payload, id);
  return { jobName: dead.job, replays: dead.replays, ...(keys ? { keys } : {}) };
};
