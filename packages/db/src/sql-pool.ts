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

/**
 * Runs `work` on a connection of its own from the pool (a transaction's statements), and gives it back. While checked
 * out, a connection has no listener of the pool's: one the server drops between two statements would raise an
 * unhandled 'error' and end the process. Here it only fails the statement in progress or the next one, and the pool
 * discards the connection.
 */
export async function withConnection<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (error: Error) => {
    lost = error;
  };
  client.on("error", onError);
  try {
    return await work(client);
  } finally {
    client.off("error", onError);
    client.release(lost);
  }
}
