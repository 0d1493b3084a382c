import { createPrivateKey, type KeyObject } from "node:crypto";
import { type Cache, createCache } from "@herald/platform";
import type { NodemailerError } from "nodemailer";
import type { SMTPEnvelope } from "nodemailer/lib/smtp-connection";
import type { Lane } from "../domain/lanes.js";
import { closableSends, type DkimSigningKey, type MailProvider, SendFailure, type SendResult } from "./mail-provider.js";
import { InvalidMessageError, type OutgoingEmail, toNodemailerMessage } from "./message.js";
import { createMessageBuilder } from "./message-builder.js";
import { createSmtpPool } from "./smtp-pool.js";

export interface SmtpProviderOptions {
  /** `smtp://user:pass@host:port` (STARTTLS when the server offers it) or `smtps://…` (TLS from the first byte). */
  url: string;
  /** Connections kept open to the relay. */
  maxConnections?: number;
  /** Messages one connection sends before it is replaced. */
  maxMessagesPerConnection?: number;
  connectionTimeoutMs?: number;
  greetingTimeoutMs?: number;
  /** Inactivity on an open connection. */
  socketTimeoutMs?: number;
  /** An unused pooled connection is closed after this long. */
  idleTimeoutMs?: number;
  /** One whole send, queueing in the pool included: bounds a relay that trickles its replies, which no socket timeout notices. */
  sendTimeoutMs?: number;
  /** Worker threads that build and sign messages; 0: the event loop's own thread (message-builder.ts). */
  buildThreads?: number;
}

/**
 * Signed header fields: nodemailer's default list (RFC 6376 section 5.4) plus `List-Unsubscribe-Post`,
 * which RFC 8058 requires the signature to cover together with `List-Unsubscribe`.
 */
export const dkimSignedHeaderFields = [
  "From",
  "Sender",
  "Reply-To",
  "Subject",
  "Date",
  "Message-ID",
  "To",
  "Cc",
  "MIME-Version",
  "Content-Type",
  "Content-Transfer-Encoding",
  "Content-ID",
  "Content-Description",
  "In-Reply-To",
  "References",
  "List-Id",
  "List-Help",
  "List-Unsubscribe",
  "List-Unsubscribe-Post",
  "List-Subscribe",
  "List-Post",
  "List-Owner",
  "List-Archive",
].join(":");

/** Parsed keys by PEM: parsing an RSA key costs more than signing with it, and a few domains send most mail. */
export class SigningKeys {
  // A PEM parses to the same key for ever: the time to live only lets the keys of domains that stopped sending go.
  private readonly keys: Cache<string, KeyObject>;
  constructor(capacity: number) {
    this.keys = createCache({ max: capacity, ttlMs: 60 * 60_000 });
  }

  /** The parsed key, or a permanent SendFailure: nodemailer would send a message it cannot sign unsigned. */
  get(dkim: DkimSigningKey): KeyObject {
    const known = this.keys.peek(dkim.privateKey);
    if (known) return known;
    let key: KeyObject;
    try {
      key = createPrivateKey(dkim.privateKey);
    } catch (error) {
      throw new SendFailure(`the DKIM key of ${dkim.domainName} cannot be read`, { kind: "permanent", reason: "dkim-key", cause: error });
    }
    if (key.asymmetricKeyType !== "rsa") {
      throw new SendFailure(`the DKIM key of ${dkim.domainName} is ${key.asymmetricKeyType}, not RSA`, {
        kind: "permanent",
        reason: "dkim-key",
      });
    }
    this.keys.set(dkim.privateKey, key);
    return key;
  }
}

const connectionCodes = new Set(["ECONNECTION", "ESOCKET", "EDNS", "ETLS", "EPROXY", "ECONNREFUSED", "ECONNRESET", "EPIPE"]);
const authenticationCodes = new Set(["EAUTH", "ENOAUTH", "EOAUTH2"]);
const timeoutCodes = new Set(["ETIMEDOUT", "EABORT"]);

/** `550 5.1.1 <x@y>: user unknown` → `5.1.1` (RFC 3463). */
function enhancedStatusOf(response: string | undefined): string | undefined {
  return response ? /^\d{3}[ -]([245]\.\d{1,3}\.\d{1,3})\b/.exec(response)?.[1] : undefined;
}

/**
 * An error of nodemailer as the queue needs it. RFC 5321: 5yz replies are permanent, 4yz transient;
 * 503 (bad sequence of commands) is the one 5yz that says the session went wrong rather than that the
 * message was refused, so it is transient, as nodemailer also reads it. The address is to blame when
 * its RCPT TO was refused for good, or the reply's enhanced status is about the mailbox (5.1.x, 5.2.1).
 */
export function classifySmtpError(error: unknown): SendFailure {
  if (error instanceof SendFailure) return error;
  if (error instanceof InvalidMessageError) {
    return new SendFailure(error.message, { kind: "permanent", reason: "invalid-message", cause: error });
  }
  const failure = (error ?? {}) as NodemailerError;
  const message = failure.message ?? String(error);
  const code = failure.code ?? "";
  const responseCode = typeof failure.responseCode === "number" ? failure.responseCode : undefined;
  const response = failure.response;
  const enhancedStatus = enhancedStatusOf(response);
  const smtp = { ...(responseCode === undefined ? {} : { responseCode }), ...(response === undefined ? {} : { response }) };
  const cause = error;

  if (authenticationCodes.has(code)) return new SendFailure(message, { kind: "temporary", reason: "authentication", ...smtp, cause });
  if (responseCode !== undefined) {
    const permanent = responseCode >= 500 && responseCode < 600 && responseCode !== 503;
    const recipientRejected =
      permanent && (/^RCPT\b/i.test(failure.command ?? "") || /^5\.1\.\d+$/.test(enhancedStatus ?? "") || enhancedStatus === "5.2.1");
    return new SendFailure(message, {
      kind: permanent ? "permanent" : "temporary",
      reason: "rejected",
      recipientRejected,
      ...smtp,
      ...(enhancedStatus === undefined ? {} : { enhancedStatus }),
      cause,
    });
  }
  // Refused before anything reached the server (no recipient, an address nodemailer cannot write).
  if (code === "EENVELOPE") return new SendFailure(message, { kind: "permanent", reason: "invalid-message", cause });
  if (timeoutCodes.has(code) || failure.name === "TimeoutError")
    return new SendFailure(message, { kind: "temporary", reason: "timeout", cause });
  if (connectionCodes.has(code)) return new SendFailure(message, { kind: "temporary", reason: "connection", cause });
  return new SendFailure(message, { kind: "temporary", reason: "unknown", cause });
}

/**
 * The SMTP provider: a pool of connections to the relay of `SMTP_URL` (smtp-pool.ts), every message DKIM-signed with
 * its own domain's key. Each message is built and signed before it waits for a pooled connection (in
 * the build threads when there are any): given to nodemailer to build and sign, it would be built
 * while it holds the connection, after the relay said DATA, and a connection's turn would last that
 * CPU work on top of its round trips.
 */
export function createSmtpProvider(options: SmtpProviderOptions): MailProvider {
  const pool = createSmtpPool({
    url: options.url,
    maxConnections: options.maxConnections ?? 5,
    maxMessagesPerConnection: options.maxMessagesPerConnection ?? 100,
    connectionTimeoutMs: options.connectionTimeoutMs ?? 10_000,
    greetingTimeoutMs: options.greetingTimeoutMs ?? 10_000,
    socketTimeoutMs: options.socketTimeoutMs ?? 60_000,
    idleTimeoutMs: options.idleTimeoutMs ?? 4 * 60_000,
  });
  const sendTimeoutMs = options.sendTimeoutMs ?? 120_000;
  const signingKeys = new SigningKeys(1_000);
  const builder = createMessageBuilder(options.buildThreads ?? 0);

  async function send(email: OutgoingEmail, dkim: DkimSigningKey, lane: Lane): Promise<SendResult> {
    try {
      const message = toNodemailerMessage(email);
      const { raw, envelope } = await builder.build(
        {
          message,
          dkim: { domainName: dkim.domainName, keySelector: dkim.keySelector, privateKey: signingKeys.get(dkim) },
          headerFieldNames: dkimSignedHeaderFields,
        },
        lane,
      );
      const response = await pool.send({ from: envelope.from, to: envelope.to } as SMTPEnvelope, raw, sendTimeoutMs, lane);
      return { providerMessageId: message.messageId, response };
    } catch (error) {
      throw classifySmtpError(error);
    }
  }

  const sends = closableSends("SMTP", send);
  return {
    send: sends.send,
    async close() {
      await sends.drain();
      pool.close();
      await builder.close();
    },
  };
}
