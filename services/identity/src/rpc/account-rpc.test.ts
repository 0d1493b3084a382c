import { Code } from "@connectrpc/connect";
import { errorDetailOf } from "@herald/errors";
import { Role } from "@herald/proto/herald/identity/v1/resources_pb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createSessionTokens } from "../domain/session-token.js";
import {
  expectFailure,
  type IdentityHarness,
  latestEmail,
  randomEmail,
  signUp,
  startIdentity,
  tokenFromEmail,
} from "../test-support/identity-harness.js";

describe("accounts and sessions", () => {
  let identity: IdentityHarness;

  beforeAll(async () => {
    identity = await startIdentity(inject("herald"));
  });

  afterAll(() => identity?.stop());

  it("signs up, logs in and out, and authenticates only live sessions", async () => {
    const email = randomEmail();
    const signed = await identity.accounts.signUp({ email: `  ${email.toUpperCase()} `, password: "correct horse battery", name: " Ada " });
    expect(signed.user).toMatchObject({ email, name: "Ada", emailVerified: false });
    const auth = await identity.accounts.authenticateSession({ sessionToken: signed.session?.token ?? "" });
    expect(auth.user?.id).toBe(signed.user?.id);
    expect(auth.role).toBe(Role.UNSPECIFIED);

    const login = await identity.accounts.logIn({ email: email.toUpperCase(), password: "correct horse battery" });
    expect(login.user?.id).toBe(signed.user?.id);
    await identity.accounts.logOut({ sessionToken: login.session?.token ?? "" });
    await expectFailure(
      identity.accounts.authenticateSession({ sessionToken: login.session?.token ?? "" }),
      Code.Unauthenticated,
      "SESSION_INVALID",
    );
    // The other session is untouched, and logging out twice is harmless.
    expect((await identity.accounts.authenticateSession({ sessionToken: signed.session?.token ?? "" })).user?.email).toBe(email);
    await identity.accounts.logOut({ sessionToken: login.session?.token ?? "" });
    await identity.accounts.logOut({ sessionToken: "garbage" });
  });

  it("refuses forged, expired and malformed session tokens", async () => {
    const { user, token } = await signUp(identity);
    const sessionId = (await identity.accounts.authenticateSession({ sessionToken: token })).sessionId;
    const forged = await createSessionTokens({ secret: "someone-elses-secret-of-32-characters!!" }).sign({
      userId: user.id,
      sessionId,
      expiresAt: new Date(Date.now() + 3_600_000),
    });
    await expectFailure(identity.accounts.authenticateSession({ sessionToken: forged }), Code.Unauthenticated, "SESSION_INVALID");
    await expectFailure(identity.accounts.authenticateSession({ sessionToken: "not.a.jwt" }), Code.Unauthenticated, "SESSION_INVALID");
    await identity.db.session.update({ where: { id: sessionId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await expectFailure(identity.accounts.authenticateSession({ sessionToken: token }), Code.Unauthenticated, "SESSION_INVALID");
  });

  it("lists every problem of a sign-up form as a 422 with field violations", async () => {
    const error = await expectFailure(
      identity.accounts.signUp({ email: "not-an-email", password: "short", name: "x".repeat(101) }),
      Code.InvalidArgument,
      "VALIDATION_ERROR",
    );
    const violations = errorDetailOf(error)?.fieldViolations.map(({ field, code }) => ({ field, code }));
    expect(violations).toEqual([
      { field: "email", code: "invalid_email" },
      { field: "password", code: "password_too_short" },
      { field: "name", code: "too_long" },
    ]);
    await expectFailure(
      identity.accounts.signUp({ email: randomEmail(), password: "x".repeat(257), name: "" }),
      Code.InvalidArgument,
      "VALIDATION_ERROR",
    );
  });

  it("refuses a second account for one address, whatever its case", async () => {
    const { email } = await signUp(identity);
    await expectFailure(
      identity.accounts.signUp({ email: email.toUpperCase(), password: "another password", name: "" }),
      Code.AlreadyExists,
      "EMAIL_TAKEN",
    );
  });

  it("answers a wrong password and an unknown address alike", async () => {
    const { email } = await signUp(identity);
    const wrong = await expectFailure(
      identity.accounts.logIn({ email, password: "wrong password" }),
      Code.Unauthenticated,
      "INVALID_CREDENTIALS",
    );
    const unknown = await expectFailure(
      identity.accounts.logIn({ email: randomEmail("nobody"), password: "wrong password" }),
      Code.Unauthenticated,
      "INVALID_CREDENTIALS",
    );
    expect(unknown.rawMessage).toBe(wrong.rawMessage);
    expect(unknown.rawMessage).toBe("Invalid email or password");

    const timed = async (email: string) => {
      const started = performance.now();
      await identity.accounts.logIn({ email, password: "wrong password" }).catch(() => {});
      return performance.now() - started;
    };
    // Taken in turns, so that a slower spell of a loaded machine falls on both alike.
    const known: number[] = [];
    const nobody: number[] = [];
    for (let turn = 0; turn < 7; turn++) {
      known.push(await timed(email));
      nobody.push(await timed(randomEmail("nobody")));
    }
    const median = (times: number[]) => times.sort((a, b) => a - b)[3] ?? 0;
    // Without the decoy hash an unknown address answers in a fraction of the time; with it, about the same.
    expect(median(nobody)).toBeGreaterThan(median(known) * 0.4);
  });

  it("verifies the address once with the emailed link", async () => {
    const { email, token: session } = await signUp(identity);
    const sent = await latestEmail(identity.db, email, "verify_email");
    expect(sent?.text).toContain("http://herald.test/auth/verify-email?token=");
    // Nothing hands it over in this harness: the body waits, beside the digest of the token it carries.
    expect(sent?.handedOverAt).toBeNull();
    const token = await tokenFromEmail(identity.db, email, "verify_email");
    const stored = await identity.db.oneTimeToken.findMany({ where: { user: { email } } });
    expect(stored.map((row) => row.tokenHash)).not.toContain(token);
    expect(stored.map((row) => row.tokenHash)).toContain(sent?.tokenHash);

    const verified = await identity.accounts.verifyEmail({ token });
    expect(verified.user).toMatchObject({ email, emailVerified: true });
    expect((await identity.accounts.authenticateSession({ sessionToken: session })).user?.emailVerified).toBe(true);
    await expectFailure(identity.accounts.verifyEmail({ token }), Code.InvalidArgument, "INVALID_TOKEN");
    await expectFailure(identity.accounts.verifyEmail({ token: "made-up" }), Code.InvalidArgument, "INVALID_TOKEN");
  });

  it("refuses an expired link and a link made for another purpose", async () => {
    const { email } = await signUp(identity);
    const token = await tokenFromEmail(identity.db, email, "verify_email");
    await identity.db.oneTimeToken.updateMany({ where: { user: { email } }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await expectFailure(identity.accounts.verifyEmail({ token }), Code.InvalidArgument, "INVALID_TOKEN");

    await identity.accounts.requestPasswordReset({ email });
    const resetToken = await tokenFromEmail(identity.db, email, "password_reset");
    await expectFailure(identity.accounts.verifyEmail({ token: resetToken }), Code.InvalidArgument, "INVALID_TOKEN");
  });

  it("resets a password with the emailed link, ending every session", async () => {
    const { email, token: session, password } = await signUp(identity);
    await identity.accounts.requestPasswordReset({ email: ` ${email.toUpperCase()}` });
    const sent = await latestEmail(identity.db, email, "password_reset");
    expect(sent?.text).toContain("http://herald.test/auth/reset-password?token=");
    const token = await tokenFromEmail(identity.db, email, "password_reset");

    // A weak password is refused without using up the link.
    await expectFailure(identity.accounts.resetPassword({ token, password: "short" }), Code.InvalidArgument, "VALIDATION_ERROR");
    await identity.accounts.resetPassword({ token, password: "a brand new passphrase" });

    await expectFailure(identity.accounts.authenticateSession({ sessionToken: session }), Code.Unauthenticated, "SESSION_INVALID");
    await expectFailure(identity.accounts.logIn({ email, password }), Code.Unauthenticated, "INVALID_CREDENTIALS");
    const login = await identity.accounts.logIn({ email, password: "a brand new passphrase" });
    expect(login.user?.emailVerified).toBe(true);
    await expectFailure(
      identity.accounts.resetPassword({ token, password: "yet another passphrase" }),
      Code.InvalidArgument,
      "INVALID_TOKEN",
    );
  });

  it("says nothing about unknown addresses but limits emails per address and purpose", async () => {
    const unknown = randomEmail("nobody");
    for (let i = 0; i < 3; i++) await identity.accounts.requestPasswordReset({ email: unknown });
    expect(await identity.db.authEmail.count({ where: { to: unknown } })).toBe(0);
    const limited = await expectFailure(
      identity.accounts.requestPasswordReset({ email: unknown }),
      Code.ResourceExhausted,
      "RATE_LIMIT_EXCEEDED",
    );
    expect(Number(errorDetailOf(limited)?.details.retryAfterSeconds)).toBeGreaterThan(0);

    const { email } = await signUp(identity);
    for (let i = 0; i < 3; i++) await identity.accounts.requestVerification({ email });
    await expectFailure(identity.accounts.requestVerification({ email }), Code.ResourceExhausted, "RATE_LIMIT_EXCEEDED");
    // One verification email from sign-up and three asked for; the limit is per purpose.
    expect(await identity.db.authEmail.count({ where: { to: email, kind: "verify_email" } })).toBe(4);
    await identity.accounts.requestPasswordReset({ email });
    expect(await identity.db.authEmail.count({ where: { to: email, kind: "password_reset" } })).toBe(1);
    await expectFailure(identity.accounts.requestPasswordReset({ email: "nope" }), Code.InvalidArgument, "VALIDATION_ERROR");
  });

  it("refuses sign-ups when DISABLE_SIGNUPS is set, while logins go on", async () => {
    const { email, password } = await signUp(identity);
    const closed = await identity.withConfig({ DISABLE_SIGNUPS: "true" });
    await expectFailure(
      closed.accounts.signUp({ email: randomEmail(), password: "correct horse battery", name: "" }),
      Code.PermissionDenied,
      "SIGNUPS_DISABLED",
    );
    expect((await closed.accounts.logIn({ email, password })).user?.email).toBe(email);
  });

  it("returns a user by id, and USER_NOT_FOUND otherwise", async () => {
    const { user } = await signUp(identity);
    expect((await identity.accounts.getUser({ userId: user.id })).user?.email).toBe(user.email);
    await expectFailure(identity.accounts.getUser({ userId: "00000000-0000-4000-8000-000000000000" }), Code.NotFound, "USER_NOT_FOUND");
    await expectFailure(identity.accounts.getUser({ userId: "nope" }), Code.NotFound, "USER_NOT_FOUND");
  });

  it("answers a session's role in a project, and PROJECT_NOT_FOUND where it has none", async () => {
    const owner = await signUp(identity);
    const stranger = await signUp(identity);
    const { project } = await identity.projects.createProject({ userId: owner.user.id, name: "Acme" });
    const projectId = project?.id ?? "";
    const auth = await identity.accounts.authenticateSession({ sessionToken: owner.token, projectId });
    expect(auth).toMatchObject({ role: Role.OWNER, projectDisabled: false });
    await expectFailure(
      identity.accounts.authenticateSession({ sessionToken: stranger.token, projectId }),
      Code.NotFound,
      "PROJECT_NOT_FOUND",
    );
    await identity.projects.updateProject({ userId: owner.user.id, projectId, disabled: true });
    expect((await identity.accounts.authenticateSession({ sessionToken: owner.token, projectId })).projectDisabled).toBe(true);
  });
});
