import type { Reader } from "./client.js";
import type { Session, User } from "./generated/client.js";

export const createSession = (db: Reader, userId: string, expiresAt: Date): Promise<Session> =>
  db.session.create({ data: { userId, expiresAt } });

/** The session with its user, when it is neither revoked nor expired and belongs to that user. */
export async function findLiveSession(
  db: Reader,
  sessionId: string,
  userId: string,
  now: Date,
): Promise<(Session & { user: User }) | undefined> {
  const session = await db.session.findFirst({
    where: { id: sessionId, userId, revokedAt: null, expiresAt: { gt: now } },
    include: { user: true },
  });
  return session ?? undefined;
}

export async function revokeSession(db: Reader, sessionId: string, userId: string, now: Date): Promise<void> {
  await db.session.updateMany({ where: { id: sessionId, userId, revokedAt: null }, data: { revokedAt: now } });
}

/** Ends every session of the user: after a password change, none of the old ones may go on. */
export async function revokeUserSessions(db: Reader, userId: string, now: Date): Promise<void> {
  await db.session.updateMany({ where: { userId, revokedAt: null }, data: { revokedAt: now } });
}
