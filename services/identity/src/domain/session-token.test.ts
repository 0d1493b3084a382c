import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSessionTokens } from "./session-token.js";

describe("session tokens", () => {
  const tokens = createSessionTokens({ secret: "a-secret-of-at-least-thirty-two-characters" });
  const claims = { userId: randomUUID(), sessionId: randomUUID(), expiresAt: new Date(Date.now() + 3_600_000) };

  it("are HS256 JWTs naming the user (sub) and the session (sid)", async () => {
    const token = await tokens.sign(claims);
    const [header, payload] = token
      .split(".")
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, "base64url").toString()));
    expect(header.alg).toBe("HS256");
    expect(payload).toMatchObject({ sub: claims.userId, sid: claims.sessionId, exp: Math.floor(claims.expiresAt.getTime() / 1000) });
    expect(await tokens.verify(token)).toEqual({ ...claims, expiresAt: new Date(Math.floor(claims.expiresAt.getTime() / 1000) * 1000) });
  });

  it("refuse a token signed with another secret, altered, expired, or not a JWT", async () => {
    const other = createSessionTokens({ secret: "another-secret-of-thirty-two-characters!" });
    expect(await tokens.verify(await other.sign(claims))).toBeUndefined();
    const [header, , signature] = (await tokens.sign(claims)).split(".");
    const forged = Buffer.from(JSON.stringify({ sub: randomUUID(), sid: claims.sessionId, exp: 9_999_999_999 })).toString("base64url");
    expect(await tokens.verify(`${header}.${forged}.${signature}`)).toBeUndefined();
    expect(await tokens.verify(await tokens.sign({ ...claims, expiresAt: new Date(Date.now() - 60_000) }))).toBeUndefined();
    expect(await tokens.verify("not-a-jwt")).toBeUndefined();
  });
});
