import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { validationFailed } from "@herald/errors";
import { type Logger, settleItems } from "@herald/platform";
import {
  type Email,
  EmailKind,
  EmailSchema,
  EmailStatus,
  type EmailsService,
  type EnqueueEmailRequest,
  ExportedEmailSchema,
  type SendEmailRequest,
  type SendEmailResponseSchema,
} from "@herald/proto/herald/delivery/v1/emails_service_pb";
import type { ActivityRow } from "../db/activity.js";
import type { ExportedEmailRow } from "../db/contact-export.js";
import type { EmailRow } from "../db/emails.js";
import type { EmailCategory, EmailInput, EmailStatus as StatusName } from "../domain/email-input.js";
import type { ContactEmailsPart, exportContactEmails } from "../emails/contact-export.js";
import type { Emails } from "../emails/emails.js";
import type { Sends } from "../sends/sends.js";
import { activityToProto } from "./activity-rpc.js";

const statusToProto: Record<StatusName, EmailStatus> = {
  PENDING: EmailStatus.PENDING,
  SENDING: EmailStatus.SENDING,
  SENT: EmailStatus.SENT,
  DELIVERED: EmailStatus.DELIVERED,
  OPENED: EmailStatus.OPENED,
  CLICKED: EmailStatus.CLICKED,
  BOUNCED: EmailStatus.BOUNCED,
  COMPLAINED: EmailStatus.COMPLAINED,
  FAILED: EmailStatus.FAILED,
};

const kindToProto: Record<EmailCategory, EmailKind> = {
  TRANSACTIONAL: EmailKind.TRANSACTIONAL,
  CAMPAIGN: EmailKind.CAMPAIGN,
  WORKFLOW: EmailKind.WORKFLOW,
};

const kindFromProto = (kind: EmailKind): EmailCategory =>
  kind === EmailKind.CAMPAIGN ? "CAMPAIGN" : kind === EmailKind.WORKFLOW ? "WORKFLOW" : "TRANSACTIONAL";

export const emailToProto = (row: EmailRow): Email =>
  create(EmailSchema, {
    id: row.id,
    projectId: row.projectId,
    contactId: row.contactId ?? "",
    to: { email: row.toEmail, name: row.toName ?? "" },
    from: { email: row.fromEmail, name: row.fromName ?? "" },
    subject: row.subject,
    status: statusToProto[row.status as StatusName] ?? EmailStatus.UNSPECIFIED,
    kind: kindToProto[row.category as EmailCategory] ?? EmailKind.UNSPECIFIED,
    attempts: row.attempts,
    messageId: row.messageId,
    providerMessageId: row.providerMessageId ?? "",
    lastError: row.lastError ?? "",
    createdAt: timestampFromDate(row.createdAt),
    sentAt: row.sentAt ? timestampFromDate(row.sentAt) : undefined,
    nextAttemptAt: row.status === "PENDING" ? timestampFromDate(row.nextAttemptAt) : undefined,
    html: row.contentExpiredAt ? "" : row.html,
    contentExpired: row.contentExpiredAt !== null,
  });

const optional = (value: string): string | undefined => (value === "" ? undefined : value);

const maxEnqueueBatch = 1_000;

function inputOf(request: EnqueueEmailRequest): EmailInput {
  return {
    idempotencyKey: optional(request.idempotencyKey),
    contactId: optional(request.contactId),
    to: { email: request.to?.email ?? "", name: optional(request.to?.name ?? "") },
    from: { email: request.from?.email ?? "", name: optional(request.from?.name ?? "") },
    ...(request.replyTo && request.replyTo.email !== "" ? { replyTo: { email: request.replyTo.email } } : {}),
    subject: request.subject,
    html: request.html,
    headers: request.headers,
    attachments: request.attachments.map((attachment) => ({
      filename: attachment.filename,
      content: attachment.content,
      contentType: attachment.contentType,
    })),
    ...(request.listUnsubscribe && request.listUnsubscribe.url !== ""
      ? {
          listUnsubscribe: {
            url: request.listUnsubscribe.url,
            ...(request.listUnsubscribe.mailto ? { mailto: request.listUnsubscribe.mailto } : {}),
          },
        }
      : {}),
    ...(request.linkMarkers
      ? {
          linkMarkers: {
            unsubscribeUrl: request.linkMarkers.unsubscribeUrl,
            subscribeUrl: request.linkMarkers.subscribeUrl,
            manageUrl: request.linkMarkers.manageUrl,
          },
        }
      : {}),
    category: kindFromProto(request.kind),
    templateId: optional(request.templateId),
    campaignId: optional(request.campaignId),
    workflowId: optional(request.workflowId),
  };
}

export function createEmailsRpc(deps: {
  emails: Emails;
  sends: Sends;
  /** exportContactEmails bound to the service's database. */
  exportContactEmails: (request: Parameters<typeof exportContactEmails>[1]) => AsyncGenerator<ContactEmailsPart>;
  logger: Logger;
}): ServiceImpl<typeof EmailsService> {
  const { emails, sends } = deps;

  async function sendEmail(request: SendEmailRequest): Promise<MessageInitShape<typeof SendEmailResponseSchema>> {
    const answer = await sends.send(request.projectId, {
      idempotencyKey: optional(request.idempotencyKey),
      to: request.to.map((recipient) => ({ email: recipient.email, name: optional(recipient.name) })),
      subject: request.subject,
      body: request.body,
      templateId: optional(request.templateId),
      from: request.from ? { email: request.from.email, name: optional(request.from.name) } : undefined,
      senderName: optional(request.senderName),
      subscribed: request.subscribed,
      data: request.data,
      headers: request.headers,
      replyTo: optional(request.replyTo),
      attachments: request.attachments.map((attachment) => ({
        filename: attachment.filename,
        content: attachment.content,
        contentType: attachment.contentType,
      })),
    });
    return {
      emails: answer.emails.map((sent) => ({ contactId: sent.contactId, contactEmail: sent.contactEmail, emailId: sent.emailId })),
      acceptedAt: timestampFromDate(answer.acceptedAt),
    };
  }

  return {
    sendEmail,

    /** Every item runs as its own SendEmail at once; their upserts, checks and enqueues share statements. */
    async sendEmails(request, context) {
      return { results: await settleItems(request.requests, sendEmail, { okCase: "sent", logger: deps.logger, procedure: context.url }) };
    },

    async enqueueEmail(request) {
      if (request.requireVerifiedSender) await sends.requireVerifiedSender(request.projectId, request.from?.email ?? "");
      const { id, created } = await emails.enqueue(request.projectId, inputOf(request));
      return { emailId: id, created };
    },
    async enqueueEmails(request) {
      const [first] = request.emails;
      if (!first) return { emails: [] };
      if (request.emails.length > maxEnqueueBatch) {
        throw validationFailed(`at most ${maxEnqueueBatch} emails per call`, [
          { field: "emails", message: `must be at most ${maxEnqueueBatch}`, code: "too_big" },
        ]);
      }
      if (request.emails.some((email) => email.projectId !== first.projectId)) {
        throw validationFailed("every email of one call must be of the same project", [
          { field: "emails", message: "must all name the same project", code: "invalid" },
        ]);
      }
      const stored = await emails.enqueueAll(first.projectId, request.emails.map(inputOf));
      return { emails: stored.map(({ id, created }) => ({ emailId: id, created })) };
    },
    async getEmail(request) {
      return { email: emailToProto(await emails.get(request.projectId, request.id)) };
    },

    async *exportContactEmails(request) {
      const parts = deps.exportContactEmails({
        projectId: request.projectId,
        contactId: request.contactId,
        email: request.email,
        pageSize: request.pageSize,
      });
      for await (const part of parts) {
        yield part.case === "emails" ? { emails: part.value.map(exportedEmailToProto) } : { received: part.value.map(activityToProto) };
      }
    },
  };
}

const optionalTimestamp = (date: Date | null) => (date ? timestampFromDate(date) : undefined);

const exportedEmailToProto = (email: ExportedEmailRow & { activity: ActivityRow[] }) =>
  create(ExportedEmailSchema, {
    id: email.id,
    toEmail: email.toEmail,
    toName: email.toName ?? "",
    fromEmail: email.fromEmail,
    fromName: email.fromName ?? "",
    replyTo: email.replyTo ?? "",
    subject: email.subject,
    html: email.html,
    headers: email.headers,
    attachments: email.attachments.map((attachment) => ({ ...attachment, size: BigInt(attachment.size) })),
    category: email.category,
    status: email.status,
    templateId: email.templateId ?? "",
    campaignId: email.campaignId ?? "",
    workflowId: email.workflowId ?? "",
    messageId: email.messageId,
    lastError: email.lastError ?? "",
    createdAt: timestampFromDate(email.createdAt),
    sentAt: optionalTimestamp(email.sentAt),
    openedAt: optionalTimestamp(email.openedAt),
    clickedAt: optionalTimestamp(email.clickedAt),
    activity: email.activity.map(activityToProto),
  });
