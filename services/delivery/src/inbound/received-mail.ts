import { createHash } from "node:crypto";
import { ContactSource } from "@herald/proto/herald/contacts/v1/resources_pb";
import PostalMime from "postal-mime";
import type { Db } from "../db/client.js";
import { projectEmailAmong } from "../db/inbound.js";
import { countInboundMessage } from "../db/monthly-usage.js";
import { recordNotification } from "../db/provider-events.js";
import { isEmailAddress, normaliseAddress } from "../domain/email-input.js";
import { writeEmailActivity } from "../events/email-activity-outbox.js";
import type { UpsertContact } from "../sends/contact-upserts.js";

/** The processed_events consumer of received messages: one SMTP retry of a message is recorded once. */
const consumer = "smtp.inbound";

/** What the activity keeps of a received message. */
export interface ReceivedMessage {
  /** Lower-case address of its From header (the envelope sender when the header has none). */
  sender: string;
  subject: string;
  /** Its Message-ID, when it has one. */
  messageId: string | undefined;
  /** Ids of our emails its In-Reply-To and References name (our Message-IDs are `<email id@domain>`), closest first. */
  answeredIds: string[];
  /** Names the message for dedupe: its Message-ID, or a digest of its bytes. */
  identity: string;
}

const uuidInMessageId = /^<?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@[^\s>]+>?$/i;

/** `<a@x> <b@y>` → [`<a@x>`, `<b@y>`]; In-Reply-To and References are lists of message ids. */
const messageIdsIn = (value: string | undefined): string[] => (value ?? "").split(/[\s,]+/).filter((part) => part !== "");

/** Subjects are one line in the feed, at most this long. */
const subjectMaxLength = 998;

/**
 * Reads what the activity records of a received message. A message without a usable sender address
 * (neither its From header nor its envelope sender) answers undefined: it cannot be put on a contact.
 */
export async function readReceivedMessage(raw: Buffer, envelopeSender: string): Promise<ReceivedMessage | undefined> {
  let email: Awaited<ReturnType<typeof PostalMime.parse>>;
  try {
    email = await PostalMime.parse(raw);
  } catch {
    return undefined;
  }
  const fromHeader = email.from && "address" in email.from ? (email.from.address ?? "") : "";
  const sender = [fromHeader, envelopeSender].map(normaliseAddress).find((address) => isEmailAddress(address));
  if (!sender) return undefined;
  // In-Reply-To first, then References from the newest: the email answered most directly wins.
  const named = [...messageIdsIn(email.inReplyTo), ...messageIdsIn(email.references).reverse()];
  const answeredIds = [...new Set(named.map((id) => uuidInMessageId.exec(id)?.[1]?.toLowerCase()).filter((id) => id !== undefined))];
  const messageId = email.messageId?.trim() || undefined;
  return {
    sender,
    // One line for the feed: line breaks, NULs and runs of white space become one space.
    subject: (email.subject ?? "")
      .replaceAll(/[\s\0]+/g, " ")
      .trim()
      .slice(0, subjectMaxLength),
    messageId,
    answeredIds,
    identity: messageId ?? createHash("sha256").update(raw).digest("hex"),
  };
}

/** A stable id for the message in the project: the same message received twice is one. */
function receivedIdOf(projectId: string, identity: string): string {
  const hex = createHash("sha256").update(`${projectId} ${identity}`).digest("hex");
  // Shaped as a version 4 UUID (RFC 9562) so that every uuid column and check takes it.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${((Number.parseInt(hex[16] ?? "0", 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** A message that would take a project past its monthly inbound cap: refused for now (452 4.2.2), so that its sender retries. */
export class InboundCapReached extends Error {
  constructor(readonly projectId: string) {
    super(`project ${projectId} has received its monthly inbound cap`);
  }
}

export type ReceivedMail = ReturnType<typeof createReceivedMail>;

/**
 * Records a received message in a project that receives its recipients' domain: the sender's contact (made,
 * unsubscribed, when new: writing to a project is no consent to its mailings), and an email.received
 * activity event (category INBOUND) with the subject and the project's email it answers, in the feed
 * and on herald.email-activity.v1 together, where contacts puts it on the timeline, automation starts
 * workflows, and identity meters it as inbound. A repeat of the same message (its sender retried after
 * a lost answer) is recorded once.
 */
export function createReceivedMail(deps: { db: Db; upsertContact: UpsertContact; nudgeOutbox: () => void }) {
  return {
    /**
     * Throws InboundCapReached when the message would go past the project's inbound cap: it is counted
     * into the month (monthly_usage, INBOUND) in the transaction that records it, under the usage row's lock.
     */
    async record(projectId: string, recipient: string, message: ReceivedMessage, receivedAt: Date): Promise<boolean> {
      const { contact } = await deps.upsertContact({ projectId, email: message.sender, source: ContactSource.SEND });
      if (!contact) throw new Error("the contacts service answered no contact");
      const inReplyTo = await projectEmailAmong(deps.db, projectId, message.answeredIds);
      const id = receivedIdOf(projectId, message.identity);
      const recorded = await deps.db.$transaction(async (tx) => {
        if (!(await recordNotification(tx, consumer, id))) return false;
        const { used, cap } = await countInboundMessage(tx, projectId);
        if (cap !== null && used > cap) throw new InboundCapReached(projectId);
        await writeEmailActivity(
          tx,
          "email.received",
          {
            id,
            projectId,
            contactId: contact.id,
            toEmail: normaliseAddress(recipient),
            category: "INBOUND",
            campaignId: null,
            workflowId: null,
            messageId: message.messageId ?? "",
            attempts: 0,
          },
          {
            occurredAt: receivedAt,
            subject: message.subject,
            sender: message.sender,
            ...(inReplyTo ? { inReplyToEmailId: inReplyTo } : {}),
          },
        );
        return true;
      });
      if (recorded) deps.nudgeOutbox();
      return recorded;
    },
  };
}
