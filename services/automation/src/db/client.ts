import { createPrismaAdapter, type PrismaPg } from "@herald/db";
import { type Prisma, PrismaClient } from "./generated/client.js";

export type Db = PrismaClient;

/** A transaction's client; functions that take it run inside the caller's transaction. */
export type Tx = Prisma.TransactionClient;

/** This service's client on the given connections: openServiceSchema's `createClient`. */
export const prismaClientOn = (adapter: PrismaPg): Db => new PrismaClient({ adapter });

/** A client on connections of its own, for tests that need Prisma alone. */
export const createDb = (databaseUrl: string, schema: string): Db => prismaClientOn(createPrismaAdapter(databaseUrl, schema));
