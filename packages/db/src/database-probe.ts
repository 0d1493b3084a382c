import pg from "pg";
import { poolConfigOf } from "./database-url.js";

export interface DatabaseProbe {
  /** Resolves when the database answers `SELECT 1`, rejects when it cannot be reached or does not answer in time. */
  check(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Asks the database whether it answers, on a connection of its own: a probe that queued behind a busy service's
 * statements would report a loaded database as down. Connecting and answering each have `timeoutMs`.
 */
export function createDatabaseProbe(databaseUrl: string, schema: string, timeoutMs = 3_000): DatabaseProbe {
  const pool = new pg.Pool({ ...poolConfigOf(databaseUrl, schema, 1), connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  // A dropped idle connection (the server restarted): the pool discards it, and the next check opens another.
  pool.on("error", () => {});
  return {
    async check() {
      await pool.query("SELECT 1");
    },
    close: () => pool.end(),
  };
}
