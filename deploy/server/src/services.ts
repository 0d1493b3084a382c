import { join } from "node:path";

export const serviceNames = ["gateway", "identity", "contacts", "delivery", "campaigns", "automation", "webhooks"] as const;
export type ServiceName = (typeof serviceNames)[number];

/** The services that own a Postgres schema, in the order their migrations run. */
export const dataServiceNames = ["identity", "contacts", "delivery", "campaigns", "automation", "webhooks"] as const;
export type DataServiceName = (typeof dataServiceNames)[number];

/**
 * A service package's folder, wherever it is installed (the workspace's link or the image's copy). Found by
 * path, not resolved by name: a service's `exports` need not list its package.json, migrations or main.
 */
export function packageDirOf(name: ServiceName): string {
  return join(import.meta.dirname, "..", "node_modules", "@herald", name);
}

export function migrationsDirOf(name: DataServiceName): string {
  return join(packageDirOf(name), "prisma", "migrations");
}
