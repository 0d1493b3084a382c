import pg from "pg";
import { poolConfigOf } from "./database-url.js";

/**
 * Connections of a service's schema used without Prisma, by the hot paths' statements
 * (the outbox relay, the send queue): a statement through Prisma costs several times the
 * CPU of the same statement through pg.
 */
export function createSqlPool(
  databaseUrl: string,
  schema: string,
  onError: (error: Error) => void,
  size = 4,
  settings: Record<string, string> = {},
): pg.Pool {
  const pool = new pg.Pool(poolConfigOf(databaseUrl, schema, size, settings));
  // An idle connection the server dropped: the pool discards it and opens another when needed.
  pool.on("error", onError);
  return pool;
}
