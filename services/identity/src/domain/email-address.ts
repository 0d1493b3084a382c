import type { FieldViolation } from "@herald/errors";

/** Addresses are compared and stored trimmed and lower-cased, so one person has one account. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

// Deliberately loose: one @, no spaces, a dot in the domain. The mailbox itself is proven by the verification email.
const emailPattern = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

/** RFC 5321 caps an address at 254 characters. */
export const maxEmailLength = 254;

export function emailViolation(email: string, field = "email"): FieldViolation | undefined {
  if (email.length === 0) return { field, message: "Email is required", code: "required" };
  if (email.length > maxEmailLength || !emailPattern.test(email)) {
    return { field, message: "Must be a valid email address", code: "invalid_email", received: JSON.stringify(email) };
  }
  return undefined;
}
