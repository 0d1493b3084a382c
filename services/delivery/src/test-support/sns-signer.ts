import { generateKeyPairSync, type KeyObject, randomUUID, sign } from "node:crypto";

/** A topic the tests' delivery accepts (SES_SNS_TOPIC_ARNS). */
export const testTopicArn = "arn:aws:sns:eu-west-1:123456789012:herald-ses-events";

/** What an SNS message looks like before it is signed. */
export type UnsignedSnsMessage = Record<string, string>;

/**
 * Signs SNS messages as SNS does (the string to sign of "Verifying the signatures of Amazon SNS
 * messages"), with a key of the test's own: `publicKey` stands for the certificate that the
 * SigningCertURL would serve.
 */
export function createSnsSigner() {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const fields = (message: UnsignedSnsMessage) =>
    message.Type === "Notification"
      ? ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"]
      : ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"];

  function signed(message: UnsignedSnsMessage, options: { version?: "1" | "2"; key?: KeyObject } = {}): string {
    const version = options.version ?? "2";
    const stringToSign = fields(message)
      .filter((field) => message[field] !== undefined)
      .map((field) => `${field}\n${message[field]}\n`)
      .join("");
    const signature = sign(version === "1" ? "sha1" : "sha256", Buffer.from(stringToSign), options.key ?? privateKey).toString("base64");
    return JSON.stringify({
      ...message,
      SignatureVersion: version,
      Signature: signature,
      SigningCertURL: "https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-test.pem",
    });
  }

  return {
    publicKey,
    signed,
    /** An SES event published to the test topic. */
    notification(event: Record<string, unknown>, topicArn = testTopicArn): UnsignedSnsMessage {
      return {
        Type: "Notification",
        MessageId: randomUUID(),
        TopicArn: topicArn,
        Message: JSON.stringify(event),
        Timestamp: new Date().toISOString(),
      };
    },
    subscriptionConfirmation(subscribeUrl: string): UnsignedSnsMessage {
      return {
        Type: "SubscriptionConfirmation",
        MessageId: randomUUID(),
        TopicArn: testTopicArn,
        Token: "a-token",
        Message: `You have chosen to subscribe to the topic ${testTopicArn}.`,
        SubscribeURL: subscribeUrl,
        Timestamp: new Date().toISOString(),
      };
    },
  };
}

export type SnsSigner = ReturnType<typeof createSnsSigner>;
