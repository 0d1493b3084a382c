export * from "./database-probe.js";
export * from "./database-url.js";
export * from "./group-commit.js";
export * from "./migrations.js";
export * from "./prisma-adapter.js";
export * from "./service-schema.js";
export * from "./sql-pool.js";
export * from "./unique-violation.js";
