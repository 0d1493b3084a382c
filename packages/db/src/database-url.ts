import type { PoolConfig } from "pg";

/**
 * The Postgres schema a service keeps its tables in: the URL's `schema` parameter
 * when it names one, else the service's own name (one database, a schema each).
 */
export function schemaOf(databaseUrl: string, serviceName: string): string {
  return new URL(databaseUrl).searchParams.get("schema") || serviceName;
}

/**
 * Connection settings as separate fields, with the service's schema first on the
 * search path (the Prisma pg adapter mishandles some connection-string options),
 * and any other server settings the connections need. Each connection names its
 * schema's service (`herald-<schema>`, or the URL's `application_name`), so that
 * pg_stat_activity and the server's logs say whose statements they are. JIT compilation is off: no statement of
 * Herald's gains from it (they are short, or bound by jsonb functions that it cannot compile), and it compiled a
 * segment count over 5 million contacts for 0.8 s of its 2.6 s once the count's cost passed jit_optimize_above_cost
 * (docs/benchmarks.md, 2026-11-29).
 */
export function poolConfigOf(databaseUrl: string, schema: string, max = 10, settings: Record<string, string> = {}): PoolConfig {
  const url = new URL(databaseUrl);
  return {
    host: decodeURIComponent(url.hostname) || "127.0.0.1",
    port: url.port ? Number(url.port) : 5432,
    user: decodeURIComponent(url.username) || "postgres",
    password: url.password ? decodeURIComponent(url.password) : undefined,
    database: decodeURIComponent(url.pathname.slice(1)) || "postgres",
    ssl: url.searchParams.get("sslmode") === "require" ? { rejectUnauthorized: false } : undefined,
    application_name: url.searchParams.get("application_name") || `herald-${schema}`,
    options: [
      `-c search_path="${schema.replaceAll('"', '""')}"`,
      ...Object.entries({ jit: "off", ...settings }).map(([name, value]) => `-c ${name}=${value}`),
    ].join(" "),
    max,
  };
}
