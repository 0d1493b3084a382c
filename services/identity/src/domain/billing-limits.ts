import { type FieldViolation, validationFailed } from "@herald/errors";
import { type BillingLimits, usageCategories } from "./usage-category.js";

/** New caps replace the old ones whole; each present cap is zero or more. */
export function validBillingLimits(limits: BillingLimits): BillingLimits {
  const violations: FieldViolation[] = [];
  for (const category of usageCategories) {
    const value = limits[category];
    if (value !== undefined && value < 0n) {
      violations.push({ field: `limits.${category}`, message: "Must be zero or more", code: "too_small", received: value.toString() });
    }
  }
  if (violations.length > 0) throw validationFailed("Invalid billing limits", violations);
  return limits;
}
