import { createHash } from "node:crypto";
import { connectServiceSchema, type PrismaPg, type ServiceSchema } from "@herald/db";
import type pg from "pg";
import { type Prisma, PrismaClient } from "./generated/client.js";

export type Db = PrismaClient;

/** A transaction's client; functions that take it must run inside the caller's transaction. */
export type Tx = Prisma.TransactionClient;

/** Either the client or a transaction's client, for statements that work both ways. */
export type Reader = Db | Tx;

/**
 * The connections Prisma runs on, used directly by the hot paths' single statements:
 * a raw statement through Prisma costs about ten times the CPU of the same statement
 * through pg (measured: ~370 µs against ~40 µs), and /v1/track has no CPU to spare.
 */
export type SqlPool = pg.Pool;

export type Database = ServiceSchema<Db>;

/** This service's client on the given connections: openServiceSchema's `createClient`. */
export const prismaClientOn = (adapter: PrismaPg): Db => new PrismaClient({ adapter });

/** The client and the pool it runs on, on a schema already migrated (tests). */
export const createDatabase = (options: { databaseUrl: string; schema: string; poolSize?: number }): Database =>
  connectServiceSchema({ ...options, createClient: prismaClientOn });

/**
 * Runs a statement built with Prisma.sql on the pool, without Prisma, as a named
 * prepared statement: each connection parses and plans it once, after which a call
 * sends only its values.
 */
export async function queryRows<Row extends pg.QueryResultRow>(pool: SqlPool, statement: Prisma.Sql): Promise<Row[]> {
  // Named after its text, so that each variant of a composed statement is prepared once per connection.
  const name = `contacts_${createHash("sha1").update(statement.text).digest("hex").slice(0, 16)}`;
  return (await pool.query<Row>({ name, text: statement.text, values: statement.values })).rows;
}
