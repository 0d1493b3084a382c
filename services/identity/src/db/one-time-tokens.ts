import type { TokenPurpose } from "../domain/one-time-token.js";
import type { Reader, Tx } from "./client.js";

export async function storeOneTimeToken(
  tx: Tx,
  token: { userId: string; purpose: TokenPurpose; tokenHash: string; expiresAt: Date },
): Promise<void> {
  await tx.oneTimeToken.create({ data: token });
}

/**
 * Uses up a token in one statement: of two concurrent uses exactly one gets the
 * user back. A wrong purpose, a used or an expired token gives undefined.
 */
export async function consumeOneTimeToken(tx: Tx, tokenHash: string, purpose: TokenPurpose, now: Date): Promise<string | undefined> {
  const rows = await tx.$queryRaw<Array<{ user_id: string }>>`
    UPDATE one_time_tokens SET used_at = ${now}
    WHERE token_hash = ${tokenHash} AND purpose = ${purpose}::"TokenPurpose" AND used_at IS NULL AND expires_at > ${now}
    RETURNING user_id::text AS user_id`;
  return rows[0]?.user_id;
}

/** Once a purpose is fulfilled (address verified, password reset), the user's other links for it stop working. */
export async function voidOutstandingTokens(tx: Tx, userId: string, purpose: TokenPurpose, now: Date): Promise<void> {
  await tx.oneTimeToken.updateMany({ where: { userId, purpose, usedAt: null }, data: { usedAt: now } });
}

/** Whether the token could be used now; a cheap look before expensive work, the use itself is consumeOneTimeToken. */
export async function isTokenUsable(db: Reader, tokenHash: string, purpose: TokenPurpose, now: Date): Promise<boolean> {
  const token = await db.oneTimeToken.findUnique({ where: { tokenHash }, select: { purpose: true, usedAt: true, expiresAt: true } });
  return token !== null && token.purpose === purpose && token.usedAt === null && token.expiresAt > now;
}
