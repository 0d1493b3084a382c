import { createPrismaAdapter } from "@herald/db";
import { PrismaClient } from "./generated/client.js";

export type Db = PrismaClient;

export function createDb(databaseUrl: string, schema: string): Db {
  return new PrismaClient({ adapter: createPrismaAdapter(databaseUrl, schema) });
}
