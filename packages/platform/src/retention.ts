import { DomainError, type FieldViolation } from "@herald/errors";

/** A kind of data's retention (docs/operations.md "Retention"): a project without a setting of its own gets the default. */
export interface RetentionWindow {
  defaultDays: number;
  minDays: number;
  maxDays: number;
}

/** A project's window of one kind of data, as GET /settings/retention shows it. */
export interface RetentionSetting {
  days: number;
  /** Whether the project chose it (else it is the deployment's default). */
  custom: boolean;
  window: RetentionWindow;
}

/**
 * Runs a bounded expiry statement (`batch`, which answers how many rows it changed, at most `batchSize`) until one
 * comes back short or the pass is aborted, so that each statement holds a hot table's locks only a moment. Answers
 * how many rows went.
 */
export async function expireInBatches(batchSize: number, batch: () => Promise<number>, signal?: AbortSignal): Promise<number> {
  let total = 0;
  for (;;) {
    if (signal?.aborted) return total;
    const changed = await batch();
    total += changed;
    if (changed < batchSize) return total;
  }
}

/** The violation of a project's window outside the deployment's bounds, or undefined when it lies within them. */
export function retentionViolation(field: string, days: number | undefined, window: RetentionWindow): FieldViolation | undefined {
  if (days === undefined || (Number.isInteger(days) && days >= window.minDays && days <= window.maxDays)) return undefined;
  return {
    field,
    message: `must be a whole number of days from ${window.minDays} to ${window.maxDays} (this deployment's bounds)`,
    code: "out_of_bounds",
    received: String(days),
  };
}

/** INVALID_ARGUMENT RETENTION_OUT_OF_BOUNDS (400) naming each field outside its bounds. */
export function retentionOutOfBounds(violations: FieldViolation[]): DomainError {
  return new DomainError("invalid-argument", "RETENTION_OUT_OF_BOUNDS", "A retention window lies outside this deployment's bounds", {
    fieldViolations: violations,
    suggestion: "GET /settings/retention lists each window's minDays and maxDays",
  });
}
