/** The UTC calendar month that contains the instant: consumption is counted per month. */
export function billingPeriodOf(instant: Date): { start: Date; end: Date } {
  const start = new Date(Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth(), 1));
  const end = new Date(Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth() + 1, 1));
  return { start, end };
}

/** The UTC day that contains the instant, as midnight. */
export const dayOf = (instant: Date): Date => new Date(Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth(), instant.getUTCDate()));
