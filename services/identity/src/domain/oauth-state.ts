import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** The anti-CSRF value of an OAuth round trip: 256 random bits. */
export const createOAuthState = (): string => randomBytes(32).toString("base64url");

const digest = (value: string) => createHash("sha256").update(value).digest();

/** Constant-time equality of the returned and the kept state; digests first, so lengths leak nothing. */
export function statesMatch(returned: string, expected: string): boolean {
  if (returned.length === 0 || expected.length === 0) return false;
  return timingSafeEqual(digest(returned), digest(expected));
}
