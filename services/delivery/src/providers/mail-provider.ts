import type { Lane } from "../domain/lanes.js";
import type { OutgoingEmail } from "./message.js";

/** The sending domain's own DKIM key: `<keySelector>._domainkey.<domainName>` publishes its public half. */
export interface DkimSigningKey {
  domainName: string;
  keySelector: string;
  /** PKCS#8 or PKCS#1 PEM of an RSA key. */
  privateKey: string;
}

export interface SendResult {
  /** What the provider calls the message: for SMTP its `Message-ID`, which bounces and complaints quote. */
  providerMessageId: string;
  /** The provider's own answer, e.g. `250 2.0.0 Ok: queued as 4XyZ`, worth keeping on the record. */
  response: string;
}

/**
 * Where the send queue hands each rendered email. Every failure of `send` is a SendFailure.
 * SMTP (nodemailer) is the default; AWS SES comes later behind the same interface.
 */
export interface MailProvider {
  /**
   * `lane`: bulk sends wait behind urgent ones for a build thread and an SMTP connection, so that a campaign's
   * sends in flight do not stand in front of a receipt (docs/operations.md "Lanes"). Without it, urgent.
   */
  send(email: OutgoingEmail, dkim: DkimSigningKey, lane?: Lane): Promise<SendResult>;
  /** Lets sends in flight finish, then closes the connections; later sends fail as temporary. */
  close(): Promise<void>;
}

export type SendFailureKind = "permanent" | "temporary";

export type SendFailureReason =
  /** The server answered with an error reply: see responseCode and response. */
  | "rejected"
  | "connection"
  | "timeout"
  /** The relay refused our credentials: our configuration, never the recipient's fault. */
  | "authentication"
  /** The email cannot be made into a valid message (a header with a line break, a bad address). */
  | "invalid-message"
  /** The domain's DKIM key cannot sign: nothing is sent unsigned. */
  | "dkim-key"
  | "closed"
  | "unknown";

/**
 * Why a send failed, in the terms the queue acts on:
 * - `temporary`: send the same email again later, with backoff (4xx replies, connection errors, timeouts);
 * - `permanent`: sending it again gets the same answer (5xx replies except 503, invalid messages); when
 *   `recipientRejected` is set the address itself was refused, so the email bounced and the address is
 *   suppressed; otherwise the email failed without blaming the address (its content or sender were refused).
 */
export class SendFailure extends Error {
  override readonly name = "SendFailure";
  readonly kind: SendFailureKind;
  readonly reason: SendFailureReason;
  readonly recipientRejected: boolean;
  /** The SMTP reply code, when the server answered. */
  readonly responseCode: number | undefined;
  /** The server's reply line(s), when it answered. */
  readonly response: string | undefined;
  /** RFC 3463 enhanced status code found in the reply (`5.1.1`), when there is one. */
  readonly enhancedStatus: string | undefined;

  constructor(
    message: string,
    details: {
      kind: SendFailureKind;
      reason: SendFailureReason;
      recipientRejected?: boolean;
      responseCode?: number;
      response?: string;
      enhancedStatus?: string;
      cause?: unknown;
    },
  ) {
    super(message, { cause: details.cause });
    this.kind = details.kind;
    this.reason = details.reason;
    this.recipientRejected = details.recipientRejected ?? false;
    this.responseCode = details.responseCode;
    this.response = details.response;
    this.enhancedStatus = details.enhancedStatus;
  }

  get permanent(): boolean {
    return this.kind === "permanent";
  }
}

/**
 * What every provider does around its own sending: refuses sends once closed, and
 * lets close() wait for the sends in flight before the provider lets its connections go.
 */
export function closableSends(name: string, send: (email: OutgoingEmail, dkim: DkimSigningKey, lane: Lane) => Promise<SendResult>) {
  const inFlight = new Set<Promise<unknown>>();
  let closed = false;
  return {
    send(email: OutgoingEmail, dkim: DkimSigningKey, lane: Lane = "urgent"): Promise<SendResult> {
      if (closed) return Promise.reject(new SendFailure(`the ${name} provider is closed`, { kind: "temporary", reason: "closed" }));
      const sending = send(email, dkim, lane);
      const tracked = sending.catch(() => undefined);
      inFlight.add(tracked);
      void tracked.finally(() => inFlight.delete(tracked));
      return sending;
    },
    /** Refuses new sends and waits for those in flight. */
    async drain(): Promise<void> {
      closed = true;
      await Promise.all(inFlight);
    },
  };
}
