import { PrismaPg } from "@prisma/adapter-pg";
import type pg from "pg";
import { schemaOf } from "./database-url.js";
import { applyMigrations } from "./migrations.js";
import { createSqlPool } from "./sql-pool.js";

/** A service's own generated Prisma client, as far as opening and closing it goes. */
export interface ServicePrismaClient {
  $disconnect(): Promise<void>;
}

/** The connections of one service to its schema. */
export interface ServiceSchema<Db extends ServicePrismaClient> {
  /** The schema the service keeps its tables in (schemaOf). */
  schema: string;
  /** The service's Prisma client. */
  db: Db;
  /**
   * Connections for statements sent without Prisma (the outbox relay, the hot paths): a
   * statement through Prisma costs several times the CPU of the same one through pg.
   * Prisma's own connections, unless `sqlPoolSize` gives them a pool of their own.
   */
  pool: pg.Pool;
  close(): Promise<void>;
}

export interface ServiceSchemaOptions<Db extends ServicePrismaClient> {
  databaseUrl: string;
  /**
   * The service's client on the given driver adapter: `(adapter) => new PrismaClient({ adapter })`
   * (each service generates its own PrismaClient class, which this package cannot name).
   */
  createClient: (adapter: PrismaPg) => Db;
  /** Connections Prisma runs on (and `pool`, unless `sqlPoolSize` is set). */
  poolSize?: number;
  /**
   * Gives statements sent without Prisma a pool of their own of this many connections, so
   * that they never queue behind Prisma's (delivery's dispatcher). Unset, they share Prisma's.
   */
  sqlPoolSize?: number;
  /** Told of an idle connection the server dropped (the pool discards it and opens another when needed). */
  logger?: { warn(fields: object, message: string): void };
}

/** The service's Prisma client and pg pool on a schema, without migrating it (tests, on a migrated template). */
export function connectServiceSchema<Db extends ServicePrismaClient>(
  options: ServiceSchemaOptions<Db> & { schema: string },
): ServiceSchema<Db> {
  const onIdleError = (error: Error) => options.logger?.warn({ err: error }, "an idle database connection failed");
  const prismaPool = createSqlPool(options.databaseUrl, options.schema, onIdleError, options.poolSize ?? 10);
  const pool =
    options.sqlPoolSize === undefined ? prismaPool : createSqlPool(options.databaseUrl, options.schema, onIdleError, options.sqlPoolSize);
  // Given a pool, the adapter leaves it open on $disconnect: close() ends it after the client.
  const db = options.createClient(new PrismaPg(prismaPool, { schema: options.schema }));
  return {
    schema: options.schema,
    db,
    pool,
    async close() {
      await db.$disconnect();
      await prismaPool.end();
      if (pool !== prismaPool) await pool.end();
    },
  };
}

/**
 * Opens a service's schema: the schema the URL names (else the service's name), migrated
 * first when `migrate` is set (MIGRATE_ON_START; a deployment that migrates in a job of its
 * own, such as a Helm hook, starts its services with it off), then its Prisma client and
 * pg pool on it.
 */
export async function openServiceSchema<Db extends ServicePrismaClient>(
  options: ServiceSchemaOptions<Db> & {
    /** The service's name, and its schema's unless the URL names another. */
    name: string;
    migrate: boolean;
    /** The service's prisma/migrations folder. */
    migrationsDir: string;
  },
): Promise<ServiceSchema<Db>> {
  const schema = schemaOf(options.databaseUrl, options.name);
  if (options.migrate) await applyMigrations({ databaseUrl: options.databaseUrl, schema, migrationsDir: options.migrationsDir });
  return connectServiceSchema({ ...options, schema });
}
