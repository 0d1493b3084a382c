import { type FieldViolation, validationFailed } from "@herald/errors";
import { emailViolation, normalizeEmail } from "./email-address.js";
import { passwordViolation } from "./password.js";

export const maxUserNameLength = 100;

export interface SignUpInput {
  email: string;
  password: string;
  name: string;
}

/** The sign-up form, normalised, or a 422 that lists every problem at once. */
export function validSignUp(input: SignUpInput): SignUpInput {
  const email = normalizeEmail(input.email);
  const name = input.name.trim();
  const violations = [emailViolation(email), passwordViolation(input.password)].filter((v): v is FieldViolation => v !== undefined);
  if (name.length > maxUserNameLength) {
    violations.push({ field: "name", message: `Name must be at most ${maxUserNameLength} characters`, code: "too_long" });
  }
  if (violations.length > 0) throw validationFailed("Invalid sign-up", violations);
  return { email, password: input.password, name };
}

/** A new password on its own (reset). */
export function validNewPassword(password: string): string {
  const violation = passwordViolation(password);
  if (violation) throw validationFailed("Invalid password", [violation]);
  return password;
}

/** An address given to request an email or to invite someone. */
export function validEmail(email: string, field = "email"): string {
  const normalized = normalizeEmail(email);
  const violation = emailViolation(normalized, field);
  if (violation) throw validationFailed("Invalid email address", [violation]);
  return normalized;
}
