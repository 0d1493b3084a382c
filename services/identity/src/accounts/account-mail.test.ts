import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { createLogger } from "@herald/platform";
import { type SendSystemEmailRequest, SystemMailService } from "@herald/proto/herald/delivery/v1/system_mail_service_pb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type IdentityHarness, latestEmail, randomEmail, startIdentity } from "../test-support/identity-harness.js";
import { createAccountMail } from "./account-mail.js";

/**
 * The hand-over against a SystemMailService of the test's own (createRouterTransport): delivery's side, and the
 * email reaching the relay, are proven end to end in tests/accounts-email.test.ts.
 */
describe("the hand-over of account emails to delivery", () => {
  let identity: IdentityHarness;
  const received: SendSystemEmailRequest[] = [];
  let refuse = 0;
  const transport = createRouterTransport(({ service }) => {
    service(SystemMailService, {
      sendSystemEmail(request) {
        if (refuse > 0) {
          refuse--;
          throw new ConnectError("delivery is restarting", Code.Unavailable);
        }
        received.push(request);
        return { emailId: request.idempotencyKey, created: true };
      },
    });
  });
  /** The hand-over's clock runs this far ahead of the real one. */
  let aheadMs = 0;
  let mail: ReturnType<typeof createAccountMail>;

  beforeAll(async () => {
    identity = await startIdentity(inject("herald"));
    mail = createAccountMail({
      db: identity.db,
      logger: createLogger({ name: "account-mail-test", level: "silent" }),
      systemMail: createClient(SystemMailService, transport),
      pollIntervalMs: 20,
      now: () => new Date(Date.now() + aheadMs),
    });
    mail.start();
  });

  afterAll(async () => {
    await mail?.stop();
    await identity?.stop();
  });

  const until = async (check: () => Promise<boolean>) => {
    const deadline = Date.now() + 20_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error("timed out");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it("hands an email over under its own id as the idempotency key, then keeps only the token's digest", async () => {
    const email = randomEmail("handed");
    await identity.accounts.signUp({ email, password: "correct horse battery", name: "" });
    await until(async () => (await latestEmail(identity.db, email, "verify_email"))?.handedOverAt != null);
    const row = await latestEmail(identity.db, email, "verify_email");
    const sent = received.find((request) => request.to === email);
    expect(sent).toMatchObject({ idempotencyKey: row?.id, kind: "verify_email", subject: "Verify your email address" });
    expect(sent?.text).toContain("http://herald.test/auth/verify-email?token=");
    expect(row?.text).toBeNull();
    expect(row?.tokenHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("tries again while delivery is away, and gives up an email whose link expired, erasing it", async () => {
    const email = randomEmail("retried");
    await identity.accounts.signUp({ email, password: "correct horse battery", name: "" });
    await until(async () => (await latestEmail(identity.db, email, "verify_email"))?.handedOverAt != null);
    refuse = 2;
    await identity.accounts.requestPasswordReset({ email });
    await until(async () => (await latestEmail(identity.db, email, "password_reset"))?.handedOverAt != null);
    // Refused twice (delivery unavailable), handed over at the third attempt, with the backoff between.
    expect((await latestEmail(identity.db, email, "password_reset"))?.attempts).toBe(3);

    await mail.stop();
    const late = randomEmail("late");
    await identity.accounts.signUp({ email: late, password: "correct horse battery", name: "" });
    // Two hours on: the link (one hour) expired before the hand-over ran again.
    aheadMs = 2 * 60 * 60_000;
    mail.start();
    await until(async () => (await latestEmail(identity.db, late, "verify_email"))?.failedAt != null);
    const given = await latestEmail(identity.db, late, "verify_email");
    expect(given?.text).toBeNull();
    expect(given?.handedOverAt).toBeNull();
    expect(received.some((request) => request.to === late)).toBe(false);
  });
});
