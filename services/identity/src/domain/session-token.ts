import { errors, jwtVerify, SignJWT } from "jose";

export interface SessionClaims {
  userId: string;
  sessionId: string;
  expiresAt: Date;
}

export interface SessionTokens {
  sign(claims: SessionClaims): Promise<string>;
  /** The claims of a well-signed, unexpired token, else undefined; whether the session is still live is the database's to say. */
  verify(token: string): Promise<SessionClaims | undefined>;
}

/** HS256 JWTs: `sub` is the user, `sid` the session row that logout revokes. */
export function createSessionTokens(options: { secret: string }): SessionTokens {
  const key = new TextEncoder().encode(options.secret);
  return {
    sign: ({ userId, sessionId, expiresAt }) =>
      new SignJWT({ sid: sessionId })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setSubject(userId)
        .setIssuedAt()
        .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
        .sign(key),
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key, { algorithms: ["HS256"] });
        if (typeof payload.sub !== "string" || typeof payload.sid !== "string" || typeof payload.exp !== "number") return undefined;
        return { userId: payload.sub, sessionId: payload.sid, expiresAt: new Date(payload.exp * 1000) };
      } catch (error) {
        if (error instanceof errors.JOSEError) return undefined;
        throw error;
      }
    },
  };
}
