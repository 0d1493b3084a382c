import { SESv2Client, SESv2ServiceException, SendEmailCommand } from "@aws-sdk/client-sesv2";
import type { Lane } from "../domain/lanes.js";
import { closableSends, type DkimSigningKey, type MailProvider, SendFailure, type SendResult } from "./mail-provider.js";
import { InvalidMessageError, type OutgoingEmail, toNodemailerMessage } from "./message.js";
import { createMessageBuilder } from "./message-builder.js";
import { dkimSignedHeaderFields, SigningKeys } from "./smtp-provider.js";

export interface SesProviderOptions {
  /** The AWS region of the SES account, e.g. `eu-west-1`. */
  region: string;
  /** Another SESv2-compatible endpoint (a VPC endpoint, a local stand-in); unset: the region's own. */
  endpoint?: string | undefined;
  /** Sent with every message: its event destinations publish deliveries, bounces and complaints. */
  configurationSet?: string | undefined;
  /** Explicit credentials; unset: the standard AWS chain (environment, shared files, web identity, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  connectionTimeoutMs?: number;
  /** One whole SendEmail call: the request, its retries (none: the queue retries) and the answer. */
  sendTimeoutMs?: number;
  /** Worker threads that build and sign messages; 0: the event loop's own thread (message-builder.ts). */
  buildThreads?: number;
}

/**
 * AWS asks that a signature made before SES not cover `Message-ID` and `Date`, which SES may set
 * itself ("Manual DKIM signing in Amazon SES"). Everything else is signed as over SMTP,
 * `List-Unsubscribe-Post` included.
 */
export const sesDkimSignedHeaderFields = dkimSignedHeaderFields
  .split(":")
  .filter((name) => name !== "Message-ID" && name !== "Date")
  .join(":");

/** The one refusal of an address SES reports synchronously is not one: SES answers bounces later, through events. */
const permanentErrors = new Set([
  // The content was refused (a virus, an unverified sender or, in the sandbox, an unverified recipient).
  "MessageRejected",
  // The MAIL FROM domain of the sending identity has no verified MX/SPF at SES.
  "MailFromDomainNotVerifiedException",
  // AWS has restricted the account's sending for good: retrying will not change the answer.
  "AccountSuspendedException",
  // The configuration set (or identity) named does not exist.
  "NotFoundException",
]);
/** The request cannot be read as a message: a bad address, a message over the size limit. */
const invalidMessageErrors = new Set(["BadRequestException", "InvalidParameterValue", "ValidationException", "SerializationException"]);
/** The account's sending rate or daily quota: waits out. */
const throttlingErrors = new Set(["TooManyRequestsException", "LimitExceededException", "ThrottlingException", "Throttling"]);
/** Our credentials or their permissions: our configuration, never the recipient's fault (like a refused SMTP login). */
const authenticationErrors = new Set([
  "UnrecognizedClientException",
  "InvalidClientTokenId",
  "InvalidSignatureException",
  "SignatureDoesNotMatch",
  "IncompleteSignature",
  "ExpiredToken",
  "ExpiredTokenException",
  "AccessDeniedException",
  "AccessDenied",
]);
const connectionCodes = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);
const timeoutCodes = new Set(["ETIMEDOUT", "ECONNABORTED"]);

/**
 * An error of the SES client (or of building the message) as the queue needs it:
 * - permanent: MessageRejected, MailFromDomainNotVerified, AccountSuspended, NotFound (the configuration set),
 *   and an invalid request (BadRequest);
 * - temporary: throttling and quotas (TooManyRequests, LimitExceeded), a sending pause (SendingPaused: the
 *   operator resumes it), credentials and permissions, every 5xx, network errors and timeouts, and anything unknown.
 * SES never refuses an address synchronously (bounces arrive later as events), so `recipientRejected` stays false.
 */
export function classifySesError(error: unknown): SendFailure {
  if (error instanceof SendFailure) return error;
  if (error instanceof InvalidMessageError) {
    return new SendFailure(error.message, { kind: "permanent", reason: "invalid-message", cause: error });
  }
  const failure = (error ?? {}) as Error & { code?: string; $metadata?: { httpStatusCode?: number } };
  const name = failure.name ?? "Error";
  const message = failure.message ?? String(error);
  const cause = error;
  const status = failure.$metadata?.httpStatusCode;
  if (error instanceof SESv2ServiceException || status !== undefined) {
    const response = `SES ${status ?? "?"} ${name}: ${message}`;
    const answered = { response, cause };
    if (permanentErrors.has(name)) return new SendFailure(response, { kind: "permanent", reason: "rejected", ...answered });
    if (invalidMessageErrors.has(name)) return new SendFailure(response, { kind: "permanent", reason: "invalid-message", ...answered });
    if (authenticationErrors.has(name) || status === 401 || status === 403) {
      return new SendFailure(response, { kind: "temporary", reason: "authentication", ...answered });
    }
    if (throttlingErrors.has(name) || name === "SendingPausedException" || (status !== undefined && status >= 500)) {
      return new SendFailure(response, { kind: "temporary", reason: "rejected", ...answered });
    }
    return new SendFailure(response, { kind: "temporary", reason: "unknown", ...answered });
  }
  if (name === "CredentialsProviderError") return new SendFailure(message, { kind: "temporary", reason: "authentication", cause });
  if (name === "TimeoutError" || name === "AbortError" || timeoutCodes.has(failure.code ?? "")) {
    return new SendFailure(message, { kind: "temporary", reason: "timeout", cause });
  }
  if (connectionCodes.has(failure.code ?? "")) return new SendFailure(message, { kind: "temporary", reason: "connection", cause });
  return new SendFailure(message, { kind: "temporary", reason: "unknown", cause });
}

/**
 * The SES provider: SESv2 SendEmail with the raw message, built and DKIM-signed with the domain's own key by
 * the same builder as the SMTP provider, so both send the same headers, parts and signature.
 * The SDK does not retry: the send queue's backoff is the one retry policy, and each attempt is on the record.
 */
export function createSesProvider(options: SesProviderOptions): MailProvider {
  const client = new SESv2Client({
    region: options.region,
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    maxAttempts: 1,
    requestHandler: { connectionTimeout: options.connectionTimeoutMs ?? 10_000, requestTimeout: options.sendTimeoutMs ?? 60_000 },
  });
  const sendTimeoutMs = options.sendTimeoutMs ?? 60_000;
  const signingKeys = new SigningKeys(1_000);
  const builder = createMessageBuilder(options.buildThreads ?? 0);

  async function send(email: OutgoingEmail, dkim: DkimSigningKey, lane: Lane): Promise<SendResult> {
    try {
      const message = toNodemailerMessage(email);
      const { raw } = await builder.build(
        {
          message,
          dkim: { domainName: dkim.domainName, keySelector: dkim.keySelector, privateKey: signingKeys.get(dkim) },
          headerFieldNames: sesDkimSignedHeaderFields,
        },
        lane,
      );
      const answer = await client.send(
        new SendEmailCommand({
          FromEmailAddress: email.from.email,
          Destination: { ToAddresses: [email.to.email] },
          Content: { Raw: { Data: raw } },
          ...(options.configurationSet === undefined ? {} : { ConfigurationSetName: options.configurationSet }),
        }),
        { abortSignal: AbortSignal.timeout(sendTimeoutMs) },
      );
      const sesMessageId = answer.MessageId ?? "";
      // SES's MessageId is what its bounce, complaint and delivery events quote; our Message-ID stays on the email row.
      return { providerMessageId: sesMessageId, response: `SES accepted ${sesMessageId} (Message-ID ${message.messageId})` };
    } catch (error) {
      throw classifySesError(error);
    }
  }

  const sends = closableSends("SES", send);
  return {
    send: sends.send,
    async close() {
      await sends.drain();
      client.destroy();
      await builder.close();
    },
  };
}
