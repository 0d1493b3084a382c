import { Resolver } from "node:dns/promises";
import { dkimVerify } from "mailauth";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { type AccountEmail, accountEmail, tokenIn } from "./support/auth-emails.js";
import { createProject, restClient, sessionCookieOf, signUp, uniqueEmail, verifyAddress } from "./support/http.js";

const { stack, dns, systemEmail } = inject("herald");
const call = restClient(stack.gatewayUrl);
// Only to show what stays stored once an email is sent: no endpoint shows auth_emails or system_emails.
const database = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
afterAll(() => database.end());

type Member = { id: string; email: string; active: boolean; role: string };

/** What identity and delivery keep of the account emails sent to an address. */
async function storedEmails(to: string) {
  const identity = await database.query<{ kind: string; text: string | null; token_hash: string | null; handed_over_at: Date | null }>(
    `SELECT kind::text AS kind, text, token_hash, handed_over_at FROM identity.auth_emails WHERE "to" = $1`,
    [to],
  );
  const delivery = await database.query<{ kind: string; text: string | null; status: string; category: string }>(
    "SELECT kind, text, status, category FROM delivery.system_emails WHERE to_email = $1",
    [to],
  );
  return { identity: identity.rows, delivery: delivery.rows };
}

/** Polls until every account email to the address was sent and both services erased its body. */
async function expectErased(to: string, count: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const stored = await storedEmails(to);
    const done =
      stored.identity.length === count &&
      stored.delivery.length === count &&
      stored.identity.every((row) => row.text === null && row.handed_over_at !== null) &&
      stored.delivery.every((row) => row.text === null && row.status === "SENT");
    if (done) {
      expect(stored.delivery.every((row) => row.category === "SYSTEM")).toBe(true);
      // The links' tokens are kept only as digests (SHA-256, hex); an invitation carries none.
      for (const row of stored.identity) {
        if (row.kind === "invitation") expect(row.token_hash).toBeNull();
        else expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
      }
      return;
    }
    if (Date.now() > deadline) throw new Error(`account emails to ${to} still stored: ${JSON.stringify(stored)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** What every account email is: from the system sender, DKIM-signed by its domain, untracked, without List-Unsubscribe or any project's trace. */
async function expectSystemMail(email: AccountEmail, linkPath: string): Promise<void> {
  expect(email.parsed.from?.value[0]?.address).toBe(systemEmail.from);
  expect(email.envelopeFrom).toBe(systemEmail.from);
  expect(email.parsed.headers.has("list-unsubscribe")).toBe(false);
  // The link goes straight to the gateway's page: no click tracking, no open pixel.
  expect(email.text).toContain(`${stack.gatewayUrl}${linkPath}`);
  expect(email.raw).not.toContain("/t/c/");
  expect(email.raw).not.toContain("/t/o/");
  const resolver = new Resolver();
  resolver.setServers([dns.address]);
  const verification = await dkimVerify(Buffer.from(email.raw), {
    resolver: (name: string, type: string) => resolver.resolve(name, type as "TXT"),
    strict: true,
  });
  expect(verification.results.map((result) => result.status?.result)).toEqual(["pass"]);
  expect(verification.results[0]?.signingDomain).toBe(systemEmail.from.split("@")[1]);
}

describe("account emails, sent by delivery as system mail (issue 19)", () => {
  it("sign-up → the verification email arrives → its link proves the address", async () => {
    const user = await signUp(call, "mailed");
    const email = await accountEmail(user.email, "verify_email");
    await expectSystemMail(email, "/auth/verify-email?token=");
    const verified = await call<{ user: { emailVerified: boolean } }>("POST", "/auth/verify-email", {
      body: { token: tokenIn(email.text) },
    });
    expect(verified.status).toBe(200);
    expect(verified.body.user.emailVerified).toBe(true);
    await expectErased(user.email, 1);
    // No project's feed, queue or metering saw it.
    const traces = await database.query(
      "SELECT 1 FROM delivery.emails WHERE to_email = $1 UNION ALL SELECT 1 FROM delivery.email_activity WHERE recipient = $1",
      [user.email],
    );
    expect(traces.rowCount).toBe(0);
  });

  it("asks again for verification: a second email, whose link works", async () => {
    const user = await signUp(call, "again");
    await accountEmail(user.email, "verify_email");
    expect((await call("POST", "/auth/request-verification", { body: { email: user.email } })).status).toBe(200);
    const second = await accountEmail(user.email, "verify_email", { count: 2 });
    expect((await call("POST", "/auth/verify-email", { body: { token: tokenIn(second.text) } })).status).toBe(200);
    await expectErased(user.email, 2);
  });

  it("resets a forgotten password from the emailed link", async () => {
    const user = await signUp(call, "forgot");
    expect((await call("POST", "/auth/request-password-reset", { body: { email: user.email } })).status).toBe(200);
    const email = await accountEmail(user.email, "password_reset");
    await expectSystemMail(email, "/auth/reset-password?token=");
    const reset = await call("POST", "/auth/reset-password", { body: { token: tokenIn(email.text), password: "a-new-long-password" } });
    expect(reset.status).toBe(200);
    const login = await call("POST", "/auth/login", { body: { email: user.email, password: "a-new-long-password" } });
    expect(login.status).toBe(200);
    await expectErased(user.email, 2);
  });

  it("invite → the invitee signs up and verifies → member", async () => {
    const owner = await signUp(call, "inviter");
    await verifyAddress(call, owner);
    const project = await createProject(call, owner.cookie, "Invitations");
    const invitee = uniqueEmail("invitee");
    const invited = await call<Member>("POST", `/projects/${project.id}/members`, { cookie: owner.cookie, body: { email: invitee } });
    expect(invited.status).toBe(201);
    expect(invited.body.active).toBe(false);

    const invitation = await accountEmail(invitee, "invitation");
    await expectSystemMail(invitation, "/auth/signup?email=");
    expect(invitation.subject).toBe("You are invited to a project on Herald");
    expect(invitation.text).toContain(owner.email);

    const signedUp = await call<{ user: { id: string } }>("POST", "/auth/signup", {
      body: { email: invitee, password: "invitee-long-password" },
    });
    expect(signedUp.status).toBe(201);
    const cookie = sessionCookieOf(signedUp);
    // Not a member until the address is proven.
    expect((await call("GET", `/projects/${project.id}/members`, { cookie })).status).toBe(404);
    const verification = await accountEmail(invitee, "verify_email");
    expect((await call("POST", "/auth/verify-email", { body: { token: tokenIn(verification.text) } })).status).toBe(200);

    const members = await call<Member[]>("GET", `/projects/${project.id}/members`, { cookie: owner.cookie });
    expect(members.body).toEqual(expect.arrayContaining([expect.objectContaining({ email: invitee, active: true, role: "MEMBER" })]));
    expect((await call("GET", `/projects/${project.id}/members`, { cookie })).status).toBe(200);
    await expectErased(invitee, 2);
  });

  it("invites an existing unverified account, which joins once it follows its verification link", async () => {
    const owner = await signUp(call, "owner");
    await verifyAddress(call, owner);
    const project = await createProject(call, owner.cookie, "Existing");
    const unproven = await signUp(call, "unproven");
    const invited = await call<Member>("POST", `/projects/${project.id}/members`, {
      cookie: owner.cookie,
      body: { email: unproven.email },
    });
    expect(invited.body.active).toBe(false);
    await accountEmail(unproven.email, "invitation");
    const verification = await accountEmail(unproven.email, "verify_email");
    expect((await call("POST", "/auth/verify-email", { body: { token: tokenIn(verification.text) } })).status).toBe(200);
    const members = await call<Member[]>("GET", `/projects/${project.id}/members`, { cookie: owner.cookie });
    expect(members.body).toEqual(expect.arrayContaining([expect.objectContaining({ email: unproven.email, active: true })]));
  });
});
