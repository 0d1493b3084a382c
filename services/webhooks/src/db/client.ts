import { createPrismaAdapter, type PrismaPg } from "@herald/db";
import { PrismaClient } from "./generated/client.js";

export type Db = PrismaClient;

/** This service's client on the given connections: openServiceSchema's `createClient`. */
export const prismaClientOn = (adapter: PrismaPg): Db => new PrismaClient({ adapter });

/** A client on connections of its own, for tests that need Prisma alone. */
export const createDb = (databaseUrl: string, schema: string): Db => prismaClientOn(createPrismaAdapter(databaseUrl, schema));
