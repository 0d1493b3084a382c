import { createHash, randomBytes } from "node:crypto";

export type TokenPurpose = "verify_email" | "password_reset";

/** Verification and reset links work for an hour. */
export const oneTimeTokenTtlMs = 60 * 60 * 1000;

/** Only the digest is stored: a leaked table gives no working link. */
export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex");

export function createOneTimeToken(now = new Date()): { token: string; tokenHash: string; expiresAt: Date } {
  const token = randomBytes(32).toString("base64url");
  return { token, tokenHash: hashToken(token), expiresAt: new Date(now.getTime() + oneTimeTokenTtlMs) };
}
