import { createPrismaAdapter, poolConfigOf } from "@herald/db";
import pg from "pg";
import { PrismaClient } from "./generated/client.js";

export type Db = PrismaClient;

export function createDb(databaseUrl: string, schema: string): Db {
  return new PrismaClient({ adapter: createPrismaAdapter(databaseUrl, schema) });
}

/**
 * Connections used without Prisma, by the dispatcher's batched writes (db/outcomes.ts): a
 * statement through Prisma costs several times the CPU of the same statement through pg.
 */
export function createSqlPool(databaseUrl: string, schema: string, onError: (error: Error) => void, size = 4): pg.Pool {
  const pool = new pg.Pool(poolConfigOf(databaseUrl, schema, size));
  // An idle connection the server dropped: the pool discards it and opens another when needed.
  pool.on("error", onError);
  return pool;
}
