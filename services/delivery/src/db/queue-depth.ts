import type pg from "pg";
import type { Lane } from "../domain/lanes.js";

export interface LaneDepth {
  /** PENDING emails whose time has come: the dispatchers' backlog. */
  due: number;
  /** PENDING emails waiting for a retry's time (or held back for their project's rate or their destination). */
  scheduled: number;
  /** Emails a dispatcher claimed and is sending. */
  sending: number;
  /** How long the oldest due email has waited since it fell due, in seconds; 0 when none is due. */
  oldestDueAgeSeconds: number;
}

export type QueueDepth = Record<Lane, LaneDepth>;

/**
 * The send queue at a glance, by lane (domain/lanes.ts: CAMPAIGN mail is bulk, the rest urgent), through the
 * (status, locked_until) index: only unsent rows are read.
 */
export async function readQueueDepth(pool: pg.Pool): Promise<QueueDepth> {
  const { rows } = await pool.query<{ lane: Lane; due: number; scheduled: number; sending: number; oldest: number | null }>(`
    SELECT CASE WHEN category = 'CAMPAIGN' THEN 'bulk' ELSE 'urgent' END AS lane,
           count(*) FILTER (WHERE status = 'PENDING' AND next_attempt_at <= now())::int AS due,
           count(*) FILTER (WHERE status = 'PENDING' AND next_attempt_at > now())::int AS scheduled,
           count(*) FILTER (WHERE status = 'SENDING')::int AS sending,
           EXTRACT(EPOCH FROM now() - min(next_attempt_at) FILTER (WHERE status = 'PENDING' AND next_attempt_at <= now()))::float8 AS oldest
    FROM emails WHERE status IN ('PENDING', 'SENDING') GROUP BY 1`);
  const depthOf = (lane: Lane): LaneDepth => {
    const row = rows.find((candidate) => candidate.lane === lane);
    return {
      due: row?.due ?? 0,
      scheduled: row?.scheduled ?? 0,
      sending: row?.sending ?? 0,
      oldestDueAgeSeconds: Math.max(0, row?.oldest ?? 0),
    };
  };
  return { urgent: depthOf("urgent"), bulk: depthOf("bulk") };
}
