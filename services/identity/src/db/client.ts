import { createPrismaAdapter } from "@herald/db";
import { type Prisma, PrismaClient } from "./generated/client.js";

export type Db = PrismaClient;

/** A transaction's client; functions that take it must run inside the caller's transaction. */
export type Tx = Prisma.TransactionClient;

/** Either the client or a transaction's client, for reads that work both ways. */
export type Reader = Db | Tx;

export function createDb(databaseUrl: string, schema: string): Db {
  return new PrismaClient({ adapter: createPrismaAdapter(databaseUrl, schema) });
}
