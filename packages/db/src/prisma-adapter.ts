import { PrismaPg } from "@prisma/adapter-pg";
import { poolConfigOf } from "./database-url.js";

/** The driver adapter every service's generated Prisma client is built with. */
export function createPrismaAdapter(databaseUrl: string, schema: string, poolSize = 10): PrismaPg {
  return new PrismaPg(poolConfigOf(databaseUrl, schema, poolSize), { schema });
}

export type { PrismaPg };
