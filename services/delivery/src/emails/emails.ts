import { randomUUID } from "node:crypto";
import { DomainError, validationFailed } from "@herald/errors";
import type { Db } from "../db/client.js";
import { type EmailRow, findEmail, insertEmail, isSuppressed } from "../db/emails.js";
import { domainOfAddress, type EmailInput, emailInputViolations, normaliseAddress } from "../domain/email-input.js";
import { isId, requireProjectId } from "../domain/ids.js";

export type Emails = ReturnType<typeof createEmails>;

const emailNotFound = () => new DomainError("not-found", "EMAIL_NOT_FOUND", "Email not found");

const orNull = (value: string | undefined): string | null => (value === undefined || value === "" ? null : value);

/**
 * The send queue's front door: an email is validated, checked against the project's
 * suppressions, and stored as PENDING. Storing the row is the whole acknowledgement: the
 * dispatcher finds it there, whatever happens to this process afterwards.
 */
export function createEmails(deps: { db: Db; nudgeDispatcher?: () => void }) {
  const { db } = deps;
  return {
    async enqueue(projectId: string, input: EmailInput): Promise<{ id: string; created: boolean }> {
      requireProjectId(projectId);
      const violations = emailInputViolations(input);
      const [first] = violations;
      if (first) throw validationFailed(`Invalid ${first.field}: it ${first.message}`, violations);
      const to = normaliseAddress(input.to.email);
      // Refused at once rather than stored as FAILED: the caller learns it now, and the queue holds nothing it will not send.
      if (await isSuppressed(db, projectId, to)) {
        throw new DomainError(
          "failed-precondition",
          "RECIPIENT_SUPPRESSED",
          `${to} is suppressed in this project: an earlier email bounced`,
          {
            details: { email: to },
            suggestion: "Send to another address; a suppressed address is not sent to again",
          },
        );
      }
      const id = randomUUID();
      const fromEmail = input.from.email.trim();
      const result = await insertEmail(db, {
        id,
        projectId,
        contactId: orNull(input.contactId),
        idempotencyKey: orNull(input.idempotencyKey),
        toEmail: to,
        toName: orNull(input.to.name),
        fromEmail,
        fromName: orNull(input.from.name),
        replyTo: input.replyTo ? normaliseAddress(input.replyTo.email) : null,
        subject: input.subject,
        html: input.html,
        headers: input.headers ?? {},
        attachments: (input.attachments ?? []).map((attachment) => ({
          filename: attachment.filename,
          contentType: attachment.contentType,
          content: Buffer.from(attachment.content).toString("base64"),
        })),
        listUnsubscribe: input.listUnsubscribe
          ? { url: input.listUnsubscribe.url, ...(input.listUnsubscribe.mailto ? { mailto: input.listUnsubscribe.mailto } : {}) }
          : null,
        templateId: orNull(input.templateId),
        campaignId: orNull(input.campaignId),
        workflowId: orNull(input.workflowId),
        category: input.category ?? "TRANSACTIONAL",
        // Fixed now, on the sending domain, and sent unchanged by every attempt: a receiver can tell a resend.
        messageId: `<${id}@${domainOfAddress(fromEmail)}>`,
      });
      if (result.created) deps.nudgeDispatcher?.();
      return result;
    },

    async get(projectId: string, id: string): Promise<EmailRow> {
      const row = isId(id) ? await findEmail(db, requireProjectId(projectId), id) : null;
      if (!row) throw emailNotFound();
      return row;
    },
  };
}
