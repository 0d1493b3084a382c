import { createPrismaAdapter, createSqlPool, type PrismaPg } from "@herald/db";
import type pg from "pg";
import { PrismaClient } from "./generated/client.js";

export type Db = PrismaClient;

/** This service's client on the given connections: openServiceSchema's `createClient`. */
export const prismaClientOn = (adapter: PrismaPg): Db => new PrismaClient({ adapter });

/** A client on connections of its own, for tests that need Prisma alone. */
export const createDb = (databaseUrl: string, schema: string): Db => prismaClientOn(createPrismaAdapter(databaseUrl, schema));

/**
 * One connection whose statements are each prepared and planned once, as a generic plan of index scans and nested
 * loops only: the dispatcher's claims (createClaimsPool) and its outcomes (createOutcomesPool) have one each. A plan
 * kept for the connection's life must not be one made while the emails table was small, where a planner free to choose
 * joins to a scan of every email.
 */
export function createPlannedOncePool(databaseUrl: string, schema: string, onError: (error: Error) => void): pg.Pool {
  return createSqlPool(databaseUrl, schema, onError, 1, {
    plan_cache_mode: "force_generic_plan",
    enable_seqscan: "off",
    enable_hashjoin: "off",
    enable_mergejoin: "off",
  });
}
