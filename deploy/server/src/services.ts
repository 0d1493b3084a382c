import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const serviceNames = ["gateway", "identity", "contacts", "delivery", "campaigns", "automation"] as const;
export type ServiceName = (typeof serviceNames)[number];

/** The services that own a Postgres schema, in the order their migrations run. */
export const dataServiceNames = ["identity", "contacts", "delivery", "campaigns", "automation"] as const;
export type DataServiceName = (typeof dataServiceNames)[number];

/** A service's prisma/migrations folder, wherever the service package is installed (workspace or image). */
export function migrationsDirOf(name: DataServiceName): string {
  return join(dirname(fileURLToPath(import.meta.resolve(`@herald/${name}/package.json`))), "prisma", "migrations");
}
