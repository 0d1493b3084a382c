import { createPublicKey, type KeyObject, verify } from "node:crypto";
import { DomainError } from "@herald/errors";
import { createLoadingCache } from "@herald/platform";

/** The fields of an Amazon SNS message that this service reads (HTTP/S delivery). */
export interface SnsMessage {
  Type: "SubscriptionConfirmation" | "Notification" | "UnsubscribeConfirmation";
  MessageId: string;
  TopicArn: string;
  Message: string;
  Timestamp: string;
  Subject?: string;
  SubscribeURL?: string;
  Token?: string;
}

const messageTypes = new Set(["SubscriptionConfirmation", "Notification", "UnsubscribeConfirmation"]);

/** The fields each type signs, in the order AWS puts them in the string to sign. */
const signedFields: Record<SnsMessage["Type"], readonly string[]> = {
  Notification: ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"],
  SubscriptionConfirmation: ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"],
  UnsubscribeConfirmation: ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"],
};

/** SNS's own hosts, in every partition: a certificate or subscription URL anywhere else is not AWS's. */
const snsHost = /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/;

export const invalidSnsMessage = (why: string) =>
  new DomainError("invalid-argument", "SNS_MESSAGE_INVALID", `Not a valid Amazon SNS message: ${why}`);

/** An https URL on an SNS host; `what` names it in the refusal. */
export function snsUrl(value: unknown, what: string, pathPattern?: RegExp): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw invalidSnsMessage(`${what} is not a URL`);
  }
  if (url.protocol !== "https:" || !snsHost.test(url.hostname) || url.port !== "" || (pathPattern && !pathPattern.test(url.pathname))) {
    throw invalidSnsMessage(`${what} is not an Amazon SNS address`);
  }
  return url;
}

/** Parses an SNS message and checks its shape; the signature is checked by verifySnsSignature. */
export function parseSnsMessage(body: string): SnsMessage & { SignatureVersion: string; Signature: string; SigningCertURL: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw invalidSnsMessage("the body is not JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw invalidSnsMessage("the body is not an object");
  const message = parsed as Record<string, unknown>;
  if (!messageTypes.has(String(message.Type))) throw invalidSnsMessage("Type is not one SNS sends");
  for (const field of [...signedFields[message.Type as SnsMessage["Type"]], "SignatureVersion", "Signature", "SigningCertURL"]) {
    if (field === "Subject" && message.Subject === undefined) continue;
    if (typeof message[field] !== "string") throw invalidSnsMessage(`${field} is missing`);
  }
  return message as unknown as SnsMessage & { SignatureVersion: string; Signature: string; SigningCertURL: string };
}

/**
 * Verifies an SNS message's signature (SignatureVersion 1: SHA1withRSA, 2: SHA256withRSA)
 * with the certificate it names, which must be served by SNS itself. Written here rather
 * than taken from a package so that the certificate source can be given: the tests sign
 * with a certificate of their own.
 */
export async function verifySnsSignature(
  message: ReturnType<typeof parseSnsMessage>,
  certificateOf: (url: URL) => Promise<KeyObject>,
): Promise<void> {
  const algorithm = message.SignatureVersion === "1" ? "sha1" : message.SignatureVersion === "2" ? "sha256" : undefined;
  if (!algorithm) throw invalidSnsMessage("SignatureVersion is neither 1 nor 2");
  const certificateUrl = snsUrl(message.SigningCertURL, "SigningCertURL", /\.pem$/);
  const fields = message as unknown as Record<string, string | undefined>;
  const stringToSign = signedFields[message.Type]
    .filter((field) => fields[field] !== undefined)
    .map((field) => `${field}\n${fields[field]}\n`)
    .join("");
  const key = await certificateOf(certificateUrl);
  if (!verify(algorithm, Buffer.from(stringToSign, "utf8"), key, Buffer.from(message.Signature, "base64"))) {
    throw invalidSnsMessage("the signature does not verify");
  }
}

/** A certificate's public key; a certificate that cannot be fetched is UNAVAILABLE: SNS delivers the message again later. */
async function fetchCertificate(url: URL, timeoutMs: number): Promise<KeyObject> {
  let pem: string;
  try {
    const response = await fetch(url, { redirect: "error", signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    pem = await response.text();
  } catch (error) {
    throw new DomainError(
      "unavailable",
      "SNS_CERTIFICATE_UNAVAILABLE",
      `The SNS signing certificate could not be fetched: ${String(error)}`,
    );
  }
  try {
    return createPublicKey(pem);
  } catch {
    throw invalidSnsMessage("SigningCertURL does not serve a certificate");
  }
}

/**
 * Fetches SNS signing certificates (a few, rotated rarely) and keeps each one's public key; the
 * notifications that arrive together while one is fetched wait for that one fetch. A URL names
 * one certificate, so a key is kept for a day, which only bounds how long a withdrawn one is trusted.
 */
export function createSnsCertificates(options: { timeoutMs: number; capacity?: number }): (url: URL) => Promise<KeyObject> {
  const keys = createLoadingCache<string, KeyObject, URL>({
    max: options.capacity ?? 20,
    ttlMs: 24 * 60 * 60_000,
    load: (_href, _signal, url) => fetchCertificate(url, options.timeoutMs),
  });
  return (url) => keys.get(url.href, url);
}
