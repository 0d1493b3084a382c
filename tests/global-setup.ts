import { fileURLToPath } from "node:url";
import { ensureInfrastructure } from "@herald/devinfra";
import { createTestDatabase, migrateAllServices, prepareTemplateDatabase, type ServiceName, startStack } from "@herald/testing";
import type { TestProject } from "vitest/node";

export interface HeraldTestContext {
  /** The server's URL: each test file clones its own database from it (createTestDatabase). */
  databaseUrl: string;
  redisUrl: string;
  kafkaBrokers: string[];
  /** The shared stack: every service and the gateway, started once for the whole run. */
  stack: { gatewayUrl: string; serviceUrls: Record<ServiceName, string>; databaseUrl: string };
}

declare module "vitest" {
  export interface ProvidedContext {
    herald: HeraldTestContext;
  }
}

export default async function setup(project: TestProject) {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const infra = await ensureInfrastructure({ root, log: (message) => console.log(`[infra] ${message}`) });
  await prepareTemplateDatabase({ databaseUrl: infra.databaseUrl, migrate: migrateAllServices });
  const stackDatabase = await createTestDatabase(infra.databaseUrl);
  const urls = { databaseUrl: stackDatabase.databaseUrl, redisUrl: infra.redisUrl, kafkaBrokers: infra.kafkaBrokers };
  // A cheaper password hash keeps the many sign-ups of the suite fast; production uses the default.
  const stack = await startStack(urls, { PASSWORD_SCRYPT_LOG_N: "14" });
  project.provide("herald", {
    databaseUrl: infra.databaseUrl,
    redisUrl: infra.redisUrl,
    kafkaBrokers: infra.kafkaBrokers,
    stack: { gatewayUrl: stack.gatewayUrl, serviceUrls: stack.serviceUrls, databaseUrl: stackDatabase.databaseUrl },
  });
  return async () => {
    await stack.stop();
    await stackDatabase.drop();
    await infra.stop();
  };
}
