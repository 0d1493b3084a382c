import { describe, expect, inject, it } from "vitest";
import { createSnsSigner, testTopicArn } from "../services/delivery/src/test-support/sns-signer.js";
import type { ErrorBody } from "./support/resources.js";

const { stack } = inject("herald");
const sns = createSnsSigner();

/** POST /webhooks/ses as SNS sends it: JSON as text/plain. */
async function post(body: string, contentType = "text/plain; charset=UTF-8") {
  const response = await fetch(`${stack.gatewayUrl}/webhooks/ses`, {
    method: "POST",
    headers: { "content-type": contentType, "x-amz-sns-message-type": "Notification" },
    body,
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as ErrorBody & { outcome?: string } };
}

const bounce = (topicArn = testTopicArn) =>
  sns.notification(
    { eventType: "Bounce", mail: { messageId: "0100-test" }, bounce: { bounceType: "Permanent", bouncedRecipients: [] } },
    topicArn,
  );

// What is recorded once a message verifies is covered against delivery directly
// (services/delivery/src/feedback/ses-notifications.test.ts), with a certificate of the test's own.
describe("POST /webhooks/ses", () => {
  it("refuses a body that is not an SNS message with 400, whatever its content type", async () => {
    for (const contentType of ["text/plain; charset=UTF-8", "application/json"]) {
      const answer = await post(JSON.stringify({ hello: "world" }), contentType);
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe("SNS_MESSAGE_INVALID");
    }
    const notJson = await post("not json at all");
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe("SNS_MESSAGE_INVALID");
  });

  it("refuses a message of a topic that is not in SES_SNS_TOPIC_ARNS with 403, before looking at its signature", async () => {
    const answer = await post(sns.signed(bounce("arn:aws:sns:us-east-1:999999999999:not-ours")));
    expect(answer.status).toBe(403);
    expect(answer.body.error.code).toBe("SNS_TOPIC_NOT_ALLOWED");
    // Not rate limited: SNS would drop what it cannot deliver after a few tries.
    expect(answer.headers.get("ratelimit-limit")).toBeNull();
  });

  it("refuses a certificate that is not SNS's with 400, and answers 503 when SNS's cannot be fetched, so that SNS sends it again", async () => {
    const signed = JSON.parse(sns.signed(bounce())) as Record<string, string>;
    const elsewhere = await post(JSON.stringify({ ...signed, SigningCertURL: "http://127.0.0.1:1/cert.pem" }));
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.error.code).toBe("SNS_MESSAGE_INVALID");
    // The test certificate's URL names an SNS host that serves no such file (or cannot be reached from here).
    const unreachable = await post(JSON.stringify(signed));
    expect(unreachable.status).toBe(503);
    expect(unreachable.body.error.code).toBe("SNS_CERTIFICATE_UNAVAILABLE");
  });

  it("refuses a body over 256 KB with 413", async () => {
    const answer = await post(JSON.stringify({ Type: "Notification", Message: "x".repeat(300 * 1024) }));
    expect(answer.status).toBe(413);
  });
});
