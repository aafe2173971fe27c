import type { Db } from "../../db.js";
import { jobJson, type JobView } from "./views.js";
import { isoSql, isUuid } from "../shared/sql.js";
import type { Tables } from "../shared/tables.js";

/**
 * One job by id: from the queue (queued or running) or, if it died, from the
 * dead letters (status `dead`). Null when neither has it: it finished (finished
 * jobs leave the queue) or never existed.
 */
export const getJob = async (db: Db, t: Tables, id: string): Promise<JobView | null> => {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<{ v: JobView }>(
    `SELECT ${jobJson("q")} AS v FROM ${t.queue} q WHERE q.id = $1::uuid
     UNION ALL
     SELECT jsonb_build_object(
       'id', d.id, 'job', d.job_name, 'payload', d.payload, 'status', 'dead',
       'runAt', NULL, 'priority', d.priority, 'attempt', d.attempts, 'maxAttempts', d.max_attempts,
       'lastError', d.last_error, 'idempotencyKey', d.idempotency_key, 'correlationId', d.correlation_id,
       'leaseExpiresAt', NULL, 'createdAt', ${isoSql("d.created_at")}, 'updatedAt', ${isoSql("d.dead_at")},
       'reason', d.reason, 'deadAt', ${isoSql("d.dead_at")})
     FROM ${t.deadLetters} d WHERE d.id = $1::uuid
     LIMIT 1`,
    [id],
  );
  return rows[0]?.v ?? null;
};
