/** PostgreSQL's SQLSTATE for a unique index that refused a write. */
const uniqueViolationState = "23505";

/** What a driver adapter error says of its cause (@prisma/driver-adapter-utils' DriverAdapterError). */
interface AdapterCause {
  kind?: unknown;
  originalCode?: unknown;
}

interface DatabaseErrorShape {
  code?: unknown;
  cause?: AdapterCause;
  meta?: { driverAdapterError?: { cause?: AdapterCause } };
}

const isUniqueCause = (cause: AdapterCause | undefined): boolean =>
  cause?.kind === "UniqueConstraintViolation" || cause?.originalCode === uniqueViolationState;

/**
 * A unique index refused the write, however the statement was sent: Prisma's model API
 * reports P2002; a raw statement through Prisma reports P2010 with the driver adapter's
 * error, whose cause carries SQLSTATE 23505; pg reports 23505 as the error's code; and
 * the driver adapter's own error, where it escapes unwrapped, carries it in its cause.
 * Recognised by shape, so that no package needs a service's generated client.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, cause, meta } = error as DatabaseErrorShape;
  if (code === "P2002" || code === uniqueViolationState) return true;
  if (code === "P2010") return isUniqueCause(meta?.driverAdapterError?.cause);
  return typeof cause === "object" && cause !== null && isUniqueCause(cause);
}
