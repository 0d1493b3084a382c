import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import { createLogger, createRpcTransport, type RpcServer } from "@herald/platform";
import { ServiceInfoSchema } from "@herald/proto/herald/common/v1/service_info_pb";
import { AccountService } from "@herald/proto/herald/identity/v1/account_service_pb";
import { BillingService } from "@herald/proto/herald/identity/v1/billing_service_pb";
import { ProjectService } from "@herald/proto/herald/identity/v1/project_service_pb";
import { createTestDatabase, createTestRedis, type TestDatabase } from "@herald/testing";
import type { Payments } from "../billing/payments.js";
import { loadConfig } from "../config.js";
import { createDb, type Db } from "../db/client.js";
import { build } from "../server.js";

export interface Infrastructure {
  databaseUrl: string;
  redisUrl: string;
}

export interface IdentityClients {
  accounts: Client<typeof AccountService>;
  projects: Client<typeof ProjectService>;
  billing: Client<typeof BillingService>;
}

export interface IdentityHarness extends IdentityClients {
  db: Db;
  databaseUrl: string;
  /** Another identity server on the same database and Redis, with other settings. */
  withConfig(env: Record<string, string>, payments?: Payments): Promise<IdentityClients>;
  stop(): Promise<void>;
}

/** Settings every test server starts with; a test adds its own on top. */
const testEnv = {
  NODE_ENV: "test",
  PASSWORD_SCRYPT_LOG_N: "14",
  PUBLIC_URL: "http://herald.test",
  LOG_LEVEL: "silent",
  AUTH_EMAIL_LIMIT_PER_HOUR: "3",
};

/**
 * identity's build() on a real port, on a database of its own cloned from the
 * migrated template and a Redis key space of its own. Outbox rows stay in the
 * database for the test to read (nothing relays them).
 */
export async function startIdentity(infra: Infrastructure, env: Record<string, string> = {}): Promise<IdentityHarness> {
  const database: TestDatabase = await createTestDatabase(infra.databaseUrl);
  const db = createDb(database.databaseUrl, "identity");
  const redis = createTestRedis(infra.redisUrl);
  const servers: RpcServer[] = [];
  const logger = createLogger({ name: "identity-test", level: "silent" });

  async function serve(overrides: Record<string, string>, payments?: Payments): Promise<IdentityClients> {
    const config = loadConfig({ ...testEnv, DATABASE_URL: database.databaseUrl, REDIS_URL: infra.redisUrl, ...env, ...overrides });
    const server = build({
      db,
      redis: redis.redis,
      logger,
      config,
      payments,
      info: create(ServiceInfoSchema, { name: "identity", version: "test", databaseSchema: "identity" }),
      nudgeOutbox: () => {},
    });
    servers.push(server);
    const transport = createRpcTransport({ baseUrl: `http://127.0.0.1:${await server.listen(0, "127.0.0.1")}`, timeoutMs: 20_000 });
    return {
      accounts: createClient(AccountService, transport),
      projects: createClient(ProjectService, transport),
      billing: createClient(BillingService, transport),
    };
  }

  const clients = await serve({});
  return {
    ...clients,
    db,
    databaseUrl: database.databaseUrl,
    withConfig: serve,
    async stop() {
      await Promise.all(servers.map((server) => server.close(100)));
      await db.$disconnect();
      await redis.cleanup();
      await database.drop();
    },
  };
}

export const randomEmail = (label = "user") => `${label}-${randomUUID()}@example.com`;

export { expectFailure } from "@herald/testing";

/** The newest email of the kind sent to the address, from the auth_emails outbox. */
export async function latestEmail(db: Db, to: string, kind: "verify_email" | "password_reset" | "invitation") {
  return db.authEmail.findFirst({ where: { to, kind }, orderBy: { createdAt: "desc" } });
}

/** The token in the newest link of the kind sent to the address. */
export async function tokenFromEmail(db: Db, to: string, kind: "verify_email" | "password_reset"): Promise<string> {
  const email = await latestEmail(db, to, kind);
  const link = email?.text?.match(/https?:\/\/\S+/)?.[0];
  const token = link ? new URL(link).searchParams.get("token") : null;
  if (!token) throw new Error(`no ${kind} link was sent to ${to}`);
  return token;
}

/** A new account whose owner followed the verification link, as members are. */
export async function signUpVerified(identity: IdentityHarness, email = randomEmail(), password = "correct horse battery") {
  const account = await signUp(identity, email, password);
  await identity.accounts.verifyEmail({ token: await tokenFromEmail(identity.db, email, "verify_email") });
  return account;
}

/** A new account and its session token. */
export async function signUp(clients: IdentityClients, email = randomEmail(), password = "correct horse battery") {
  const { user, session } = await clients.accounts.signUp({ email, password, name: "Test User" });
  if (!user || !session) throw new Error("sign-up returned no user or session");
  return { user, token: session.token, email, password };
}
