import type { FastifyReply, FastifyRequest } from "fastify";

export const sessionCookieName = "herald_session";

export function readSessionToken(request: FastifyRequest): string | undefined {
  const value = request.cookies[sessionCookieName];
  return value ? value : undefined;
}

/** HttpOnly, SameSite=Lax, and Secure whenever the public URL is https. */
export function setSessionCookie(reply: FastifyReply, token: string, expiresAt: Date, secure: boolean): void {
  reply.setCookie(sessionCookieName, token, { httpOnly: true, sameSite: "lax", secure, path: "/", expires: expiresAt });
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  reply.clearCookie(sessionCookieName, { httpOnly: true, sameSite: "lax", secure, path: "/" });
}
