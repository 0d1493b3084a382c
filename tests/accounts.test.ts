import { describe, expect, inject, it } from "vitest";
import { accountEmail, tokenIn } from "./support/auth-emails.js";
import { createProject, restClient, sessionCookieOf, signUp, uniqueEmail } from "./support/http.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

describe("accounts and sessions", () => {
  it("signs up, signs in, creates a project whose keys work, and signs out", async () => {
    const user = await signUp(call, "owner");
    const me = await call<{ email: string; emailVerified: boolean }>("GET", "/users/@me", { cookie: user.cookie });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ email: user.email, emailVerified: false });

    const login = await call("POST", "/auth/login", { body: { email: user.email.toUpperCase(), password: user.password } });
    expect(login.status).toBe(200);
    const setCookie = login.headers.getSetCookie().find((value) => value.startsWith("herald_session=")) ?? "";
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).not.toMatch(/Secure/i);
    const cookie = sessionCookieOf(login);

    const project = await createProject(call, cookie, "Shop");
    expect(project.secretKey).toMatch(/^sk_[A-Za-z0-9]{40,}$/);
    expect(project.publicKey).toMatch(/^pk_[A-Za-z0-9]{40,}$/);
    const listed = await call<Array<Record<string, unknown>>>("GET", "/users/@me/projects", { cookie });
    expect(listed.body).toEqual([expect.objectContaining({ id: project.id, name: "Shop", role: "OWNER", publicKey: project.publicKey })]);
    // The secret key is shown once; later answers carry only a hint.
    expect(JSON.stringify(listed.body)).not.toContain(project.secretKey);

    const withKey = await call<{ apiKeyUsed: boolean }>("GET", `/projects/${project.id}/setup-state`, { key: project.secretKey });
    expect(withKey.status).toBe(200);
    expect(withKey.body.apiKeyUsed).toBe(true);

    const logout = await call("GET", "/auth/logout", { cookie });
    expect(logout.status).toBe(200);
    expect(logout.headers.getSetCookie().join(";")).toMatch(/herald_session=;.*Expires=Thu, 01 Jan 1970/i);
    const afterLogout = await call<{ error: { code: string } }>("GET", "/users/@me", { cookie });
    expect(afterLogout.status).toBe(401);
    expect(afterLogout.body.error.code).toBe("SESSION_INVALID");
  });

  it("does not reveal whether an address exists when sign-in fails", async () => {
    const user = await signUp(call, "private");
    const wrongPassword = await call<{ error: { code: string; message: string; statusCode: number } }>("POST", "/auth/login", {
      body: { email: user.email, password: "not-the-password" },
    });
    const unknownAddress = await call<{ error: { code: string; message: string; statusCode: number } }>("POST", "/auth/login", {
      body: { email: uniqueEmail("nobody"), password: "not-the-password" },
    });
    expect(wrongPassword.status).toBe(401);
    expect(unknownAddress.status).toBe(401);
    const { code, message, statusCode } = wrongPassword.body.error;
    expect(unknownAddress.body.error).toMatchObject({ code, message, statusCode });
  });

  it("resets a password end to end with the token from the email, once", async () => {
    const user = await signUp(call, "forgetful");
    expect((await call("POST", "/auth/request-password-reset", { body: { email: user.email } })).status).toBe(200);
    const email = await accountEmail(user.email, "password_reset");
    const token = tokenIn(email.text);
    expect(token.length).toBeGreaterThanOrEqual(40);

    const reset = await call("POST", "/auth/reset-password", { body: { token, password: "a-brand-new-password" } });
    expect(reset.status).toBe(200);
    expect((await call("POST", "/auth/login", { body: { email: user.email, password: user.password } })).status).toBe(401);
    expect((await call("POST", "/auth/login", { body: { email: user.email, password: "a-brand-new-password" } })).status).toBe(200);
    // Sessions from before the reset are over.
    expect((await call("GET", "/users/@me", { cookie: user.cookie })).status).toBe(401);

    const reused = await call<{ error: { code: string } }>("POST", "/auth/reset-password", {
      body: { token, password: "yet-another-password" },
    });
    expect(reused.status).toBe(400);
    expect(reused.body.error.code).toBe("INVALID_TOKEN");
  });

  it("verifies an address with the token from the sign-up email", async () => {
    const user = await signUp(call, "verifier");
    const email = await accountEmail(user.email, "verify_email");
    const verified = await call<{ user: { emailVerified: boolean } }>("POST", "/auth/verify-email", {
      body: { token: tokenIn(email.text) },
    });
    expect(verified.status).toBe(200);
    expect(verified.body.user.emailVerified).toBe(true);
    expect((await call("POST", "/auth/verify-email", { body: { token: tokenIn(email.text) } })).status).toBe(400);
  });

  it("answers silently for an unknown address asking for a reset", async () => {
    const answer = await call("POST", "/auth/request-password-reset", { body: { email: uniqueEmail("ghost") } });
    expect(answer.status).toBe(200);
  });

  it("refuses a taken address, invalid input and malformed JSON with the error envelope", async () => {
    const user = await signUp(call, "taken");
    const taken = await call<{ error: { code: string } }>("POST", "/auth/signup", {
      body: { email: user.email, password: "whatever-password" },
    });
    expect(taken.status).toBe(409);

    const invalid = await call<{ success: boolean; error: { code: string; errors: Array<Record<string, unknown>> } }>(
      "POST",
      "/auth/signup",
      {
        body: { email: 42 },
      },
    );
    expect(invalid.status).toBe(422);
    expect(invalid.body.success).toBe(false);
    expect(invalid.body.error.code).toBe("VALIDATION_ERROR");
    expect(invalid.body.error.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: "email", code: "invalid_type", received: "42" }),
        expect.objectContaining({ field: "password", code: "required" }),
      ]),
    );

    const malformed = await call<{ success: boolean; error: { code: string; statusCode: number; requestId: string } }>(
      "POST",
      "/auth/login",
      {
        rawBody: '{"email": "a@b.c",',
      },
    );
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ success: false, error: { code: "INVALID_JSON", statusCode: 400 } });
    expect(malformed.headers.get("x-request-id")).toBe(malformed.body.error.requestId);
  });

  it("needs a session for account routes", async () => {
    const answer = await call<{ error: { code: string } }>("GET", "/users/@me/projects");
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe("UNAUTHORIZED");
  });
});
