import { describe, expect, it } from "vitest";
import { SendFailure } from "../providers/mail-provider.js";
import { outcomeOfSendError, retryOrFail } from "./send-outcome.js";

const policy = { maxAttempts: 3, baseDelayMs: 1_000, maxDelayMs: 60_000 };

describe("a send's outcome", () => {
  it("defers a temporary failure with backoff while attempts remain, then fails it for good", () => {
    const deferred = retryOrFail(policy, 1, "421 try later", 0);
    expect(deferred).toMatchObject({ status: "PENDING", lastError: "421 try later", event: "email.deferred" });
    const at = deferred.status === "PENDING" ? deferred.nextAttemptAt.getTime() : Number.NaN;
    expect(at).toBeGreaterThanOrEqual(500);
    expect(at).toBeLessThanOrEqual(1_000);
    expect(retryOrFail(policy, 3, "421 try later", 0)).toEqual({
      status: "FAILED",
      lastError: "gave up after 3 attempts: 421 try later",
      event: "email.failed",
    });
  });

  it("bounces and suppresses a permanently refused recipient, and fails other permanent refusals without suppressing", () => {
    const refused = new SendFailure("rejected", {
      kind: "permanent",
      reason: "rejected",
      recipientRejected: true,
      response: "550 5.1.1 no such user",
    });
    expect(outcomeOfSendError(refused, policy, 1)).toEqual({
      status: "BOUNCED",
      lastError: "550 5.1.1 no such user",
      event: "email.bounce",
      suppressAddress: true,
    });
    const content = new SendFailure("rejected", { kind: "permanent", reason: "rejected", response: "554 5.7.1 spam" });
    expect(outcomeOfSendError(content, policy, 1)).toEqual({ status: "FAILED", lastError: "554 5.7.1 spam", event: "email.failed" });
  });

  it("tries again after a temporary failure and after an error that is not a SendFailure", () => {
    const timeout = new SendFailure("the relay did not answer", { kind: "temporary", reason: "timeout" });
    expect(outcomeOfSendError(timeout, policy, 1)).toMatchObject({ status: "PENDING", lastError: "the relay did not answer" });
    expect(outcomeOfSendError(new Error("socket hang up"), policy, 1)).toMatchObject({ status: "PENDING", lastError: "socket hang up" });
    expect(outcomeOfSendError("odd", policy, 3)).toMatchObject({ status: "FAILED", lastError: "gave up after 3 attempts: odd" });
  });
});
