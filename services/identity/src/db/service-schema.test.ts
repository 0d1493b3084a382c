import { randomUUID } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { isUniqueViolation, openServiceSchema, type ServiceSchema } from "@herald/db";
import { createLogger, toConnectError } from "@herald/platform";
import { createTestDatabase, type TestDatabase } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Db, prismaClientOn } from "./client.js";

const logger = createLogger({ name: "service-schema-test", level: "silent" });
const migrationsDir = new URL("../../prisma/migrations", import.meta.url).pathname;

/** The error a statement fails with. */
const failureOf = (statement: Promise<unknown>): Promise<unknown> =>
  statement.then(
    () => {
      throw new Error("the statement succeeded");
    },
    (error: unknown) => error,
  );

// identity's own schema and generated client stand in for any service's: @herald/db has neither.
describe("a service's schema opened through openServiceSchema", () => {
  let database: TestDatabase;
  let identity: ServiceSchema<Db>;
  const opened: Array<ServiceSchema<Db>> = [];

  const open = async (schema: string, migrate: boolean) => {
    const url = new URL(database.databaseUrl);
    url.searchParams.set("schema", schema);
    const service = await openServiceSchema({
      name: "identity",
      databaseUrl: url.toString(),
      migrate,
      migrationsDir,
      createClient: prismaClientOn,
    });
    opened.push(service);
    return service;
  };

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    identity = await open("identity", false);
  });

  afterAll(async () => {
    for (const service of opened) await service.close();
    await database?.drop();
  });

  it("applies the service's migrations only when asked", async () => {
    const migrated = await open(`migrated_${randomUUID().slice(0, 8)}`, true);
    expect(await migrated.db.user.count()).toBe(0);
    const bare = await open(`bare_${randomUUID().slice(0, 8)}`, false);
    expect(bare.schema).toMatch(/^bare_/);
    await expect(bare.db.user.count()).rejects.toThrow(/does not exist/);
  });

  it("answers AlreadyExists for a unique violation through Prisma's model API, raw SQL through Prisma, and pg", async () => {
    const email = `taken-${randomUUID()}@example.com`;
    await identity.db.user.create({ data: { email } });
    const failures = {
      model: await failureOf(identity.db.user.create({ data: { email } })),
      prismaRaw: await failureOf(
        identity.db.$executeRaw`INSERT INTO users (id, email, updated_at) VALUES (${randomUUID()}::uuid, ${email}, now())`,
      ),
      pg: await failureOf(identity.pool.query("INSERT INTO users (id, email, updated_at) VALUES ($1, $2, now())", [randomUUID(), email])),
    };
    expect(Object.values(failures).map((error) => (error as { code?: unknown }).code)).toEqual(["P2002", "P2010", "23505"]);
    for (const error of Object.values(failures)) {
      expect(isUniqueViolation(error)).toBe(true);
      expect(toConnectError(error, { logger, procedure: "test" }).code).toBe(Code.AlreadyExists);
    }
  });

  it("leaves another constraint's failure, raw or not, an internal error", async () => {
    const failures = [
      await failureOf(identity.db.$executeRaw`INSERT INTO users (id, email, updated_at) VALUES (${randomUUID()}::uuid, NULL, now())`),
      await failureOf(identity.pool.query("INSERT INTO users (id, email, updated_at) VALUES ($1, NULL, now())", [randomUUID()])),
    ];
    for (const error of failures) {
      expect(isUniqueViolation(error)).toBe(false);
      expect(toConnectError(error, { logger, procedure: "test" }).code).toBe(Code.Internal);
    }
  });
});
