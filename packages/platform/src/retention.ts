import { DomainError, type FieldViolation } from "@herald/errors";

/** A kind of data's retention (docs/operations.md "Retention"): a project without a setting of its own gets the default. */
export interface RetentionWindow {
  defaultDays: number;
  minDays: number;
  maxDays: number;
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
