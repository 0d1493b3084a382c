interface PrismaErrorShape {
  code?: unknown;
  meta?: { driverAdapterError?: { cause?: { originalCode?: unknown; kind?: unknown } } };
}

/**
 * A unique index refused the write. Prisma's model API reports P2002; a raw statement
 * reports P2010 with the driver adapter's error, which carries Postgres' SQLSTATE 23505.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, meta } = error as PrismaErrorShape;
  const cause = meta?.driverAdapterError?.cause;
  return code === "P2002" || (code === "P2010" && (cause?.originalCode === "23505" || cause?.kind === "UniqueConstraintViolation"));
}
