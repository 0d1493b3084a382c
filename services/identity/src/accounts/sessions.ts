import { DomainError } from "@herald/errors";
import type { Db } from "../db/client.js";
import { createSession, findLiveSession, revokeSession } from "../db/sessions.js";
import type { User } from "../db/users.js";
import { isId } from "../domain/ids.js";
import type { SessionTokens } from "../domain/session-token.js";

export interface OpenedSession {
  token: string;
  sessionId: string;
  expiresAt: Date;
}

export interface AuthenticatedSession {
  user: User;
  sessionId: string;
  expiresAt: Date;
}

export interface Sessions {
  open(userId: string): Promise<OpenedSession>;
  /** The session's user; SESSION_INVALID when the token is forged, expired, or its session was ended. */
  authenticate(token: string): Promise<AuthenticatedSession>;
  /** Ends the token's session; a token that names no live session has nothing to end. */
  close(token: string): Promise<void>;
}

const sessionInvalid = () =>
  new DomainError("unauthenticated", "SESSION_INVALID", "Your session is invalid or has expired", { suggestion: "Log in again" });

/** A signed JWT for the browser and a row for the server, so that one can be ended before it expires. */
export function createSessions(deps: { db: Db; tokens: SessionTokens; ttlHours: number }): Sessions {
  const { db, tokens } = deps;
  return {
    async open(userId) {
      const expiresAt = new Date(Date.now() + deps.ttlHours * 3_600_000);
      const session = await createSession(db, userId, expiresAt);
      return { token: await tokens.sign({ userId, sessionId: session.id, expiresAt }), sessionId: session.id, expiresAt };
    },
    async authenticate(token) {
      const claims = await tokens.verify(token);
      if (!claims || !isId(claims.sessionId) || !isId(claims.userId)) throw sessionInvalid();
      const session = await findLiveSession(db, claims.sessionId, claims.userId, new Date());
      if (!session) throw sessionInvalid();
      return { user: session.user, sessionId: session.id, expiresAt: session.expiresAt };
    },
    async close(token) {
      const claims = await tokens.verify(token);
      if (!claims || !isId(claims.sessionId) || !isId(claims.userId)) return;
      await revokeSession(db, claims.sessionId, claims.userId, new Date());
    },
  };
}
