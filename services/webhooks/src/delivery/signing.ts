import { Webhook } from "standardwebhooks";

/**
 * The Standard Webhooks headers of one attempt: webhook-id (the message's, the same on every attempt), the attempt's
 * timestamp, and one `v1,<base64>` signature per secret, space-separated, so that during a rotation's grace a receiver
 * verifies with either the old secret or the new one.
 */
export function signatureHeaders(
  messageId: string,
  at: Date,
  body: string,
  secrets: readonly string[],
): { "webhook-id": string; "webhook-timestamp": string; "webhook-signature": string } {
  return {
    "webhook-id": messageId,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": secrets.map((secret) => new Webhook(secret).sign(messageId, at, body)).join(" "),
  };
}
