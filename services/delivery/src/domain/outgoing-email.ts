import type { EmailRow, StoredAttachment } from "../db/emails.js";
import type { OutgoingEmail } from "../providers/message.js";

/**
 * The message a claimed email is handed to the provider as: its stored attachments decoded from
 * base64, and the optional fields (names, Reply-To, List-Unsubscribe, return path) present only when set.
 */
export function outgoingEmailOf(row: EmailRow, messageIdDomain: string, returnPath?: string): OutgoingEmail {
  const attachments = (row.attachments as unknown as StoredAttachment[]).map((attachment) => ({
    filename: attachment.filename,
    contentType: attachment.contentType,
    content: Buffer.from(attachment.content, "base64"),
  }));
  const listUnsubscribe = row.listUnsubscribe as { url: string; mailto?: string } | null;
  return {
    emailId: row.id,
    from: { email: row.fromEmail, ...(row.fromName ? { name: row.fromName } : {}) },
    to: { email: row.toEmail, ...(row.toName ? { name: row.toName } : {}) },
    ...(row.replyTo ? { replyTo: { email: row.replyTo } } : {}),
    subject: row.subject,
    html: row.html,
    headers: row.headers as Record<string, string>,
    attachments,
    ...(listUnsubscribe ? { listUnsubscribe } : {}),
    messageIdDomain,
    messageId: row.messageId,
    ...(returnPath !== undefined ? { returnPath } : {}),
  };
}
