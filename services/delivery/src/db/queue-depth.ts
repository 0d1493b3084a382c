import type pg from "pg";

export interface QueueDepth {
  /** PENDING emails whose time has come: the dispatchers' backlog. */
  due: number;
  /** PENDING emails waiting for a retry's time. */
  scheduled: number;
  /** Emails a dispatcher claimed and is sending. */
  sending: number;
  /** How long the oldest due email has waited since it fell due, in seconds; 0 when none is due. */
  oldestDueAgeSeconds: number;
}

/** The send queue at a glance, through the (status, next_attempt_at) index: only unsent rows are read. */
export async function readQueueDepth(pool: pg.Pool): Promise<QueueDepth> {
  const { rows } = await pool.query<{ due: number; scheduled: number; sending: number; oldest: number | null }>(`
    SELECT count(*) FILTER (WHERE status = 'PENDING' AND next_attempt_at <= now())::int AS due,
           count(*) FILTER (WHERE status = 'PENDING' AND next_attempt_at > now())::int AS scheduled,
           count(*) FILTER (WHERE status = 'SENDING')::int AS sending,
           EXTRACT(EPOCH FROM now() - min(next_attempt_at) FILTER (WHERE status = 'PENDING' AND next_attempt_at <= now()))::float8 AS oldest
    FROM emails WHERE status IN ('PENDING', 'SENDING')`);
  const row = rows[0];
  return {
    due: row?.due ?? 0,
    scheduled: row?.scheduled ?? 0,
    sending: row?.sending ?? 0,
    oldestDueAgeSeconds: Math.max(0, row?.oldest ?? 0),
  };
}
