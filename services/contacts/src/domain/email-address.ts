import type { FieldViolation } from "@herald/errors";

/** Addresses are compared and stored trimmed and lower-cased, so one person is one contact. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

// Deliberately loose: one @, no spaces, a dot in the domain. Deliverability is /v1/verify's business.
const emailPattern = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

/** RFC 5321 caps an address at 254 characters. */
export const maxEmailLength = 254;

export const isValidEmail = (normalized: string): boolean => normalized.length <= maxEmailLength && emailPattern.test(normalized);

/** Why a normalised address is refused, or undefined when it is usable. */
export function emailViolation(normalized: string, field = "email"): FieldViolation | undefined {
  if (normalized.length === 0) return { field, message: "Email is required", code: "required" };
  if (!isValidEmail(normalized)) {
    return { field, message: "Must be a valid email address", code: "invalid_email", received: JSON.stringify(normalized) };
  }
  return undefined;
}
