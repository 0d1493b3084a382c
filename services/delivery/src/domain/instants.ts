/**
 * Whether PostgreSQL can be given this instant as the driver writes it: years 1 to 9999. The driver
 * writes year 0 and years before it in forms PostgreSQL refuses, and no email is older or due later.
 */
export function isStorableInstant(instant: Date): boolean {
  const year = instant.getUTCFullYear();
  return year >= 1 && year <= 9999;
}
