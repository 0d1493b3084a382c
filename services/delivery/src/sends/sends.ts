import { randomUUID } from "node:crypto";
import { validationFailed } from "@herald/errors";
import { ContactSource } from "@herald/proto/herald/contacts/v1/resources_pb";
import { liquidFailure, type RenderVariables } from "@herald/rendering";
import type { RenderPool } from "@herald/rendering/pool";
import type { Db } from "../db/client.js";
import type { TemplateRow } from "../db/templates.js";
import { domainOfAddress, type EmailInput, type MailboxInput } from "../domain/email-input.js";
import { requireProjectId } from "../domain/ids.js";
import {
  estimatedMessageBytes,
  recipientField,
  type SendRequest,
  sendLimits,
  sendRequestViolations,
  splitMailbox,
} from "../domain/send-request.js";
import { parseAddress } from "../domain/template-fields.js";
import { type Emails, refuseOverCap, refuseSuppressed, refuseSuspended } from "../emails/emails.js";
import { type LinkTokens, recipientLinks } from "../links/link-tokens.js";
import type { VerifiedSenderCache } from "../sending-domains/sender-domain.js";
import type { Templates } from "../templates/templates.js";
import type { UpsertContact } from "./contact-upserts.js";

export type Sends = ReturnType<typeof createSends>;

export interface SentEmail {
  contactId: string;
  contactEmail: string;
  emailId: string;
}

const failed = (field: string, message: string, code: string) =>
  validationFailed(`Invalid ${field}: it ${message}`, [{ field, message, code }]);

/**
 * The sender: the request's (its name, else the deprecated `name`), else the template's. The request's
 * address as templates store theirs, its domain in lower case and `xn--` form, as verified domains are.
 */
function senderOf(request: SendRequest, template: TemplateRow | undefined): MailboxInput {
  if (request.from) {
    const mailbox = splitMailbox(request.from.email);
    const parsed = parseAddress(mailbox.email);
    const name = request.from.name || mailbox.name || request.senderName;
    return { email: parsed.ok ? parsed.address : mailbox.email, ...(name ? { name } : {}) };
  }
  if (template) return { email: template.fromAddress, ...(template.fromName ? { name: template.fromName } : {}) };
  throw failed("from", "is required when the template has no sender", "required");
}

/**
 * POST /v1/send. Every check that can refuse the request runs first (shape, template,
 * sender domain, Liquid, suppressions, the billing cap as the month stands), so a refused
 * call writes nothing. Then each recipient in turn is created or updated as a contact (the
 * contacts service applies the data rules and answers the variables, one-off values
 * included), and all are rendered in one task of the render threads; the emails of the call
 * are enqueued together. Rendering can still fail for one recipient (a sandbox limit hit by
 * its data), and the enqueue can still meet the cap (concurrent calls took the rest): the
 * call is refused and nothing is enqueued, though the contacts keep their update.
 */
export function createSends(deps: {
  db: Db;
  renders: RenderPool;
  templates: Templates;
  emails: Emails;
  /** The contacts service's UpsertContact (createContactUpserts). */
  upsertContact: UpsertContact;
  links: LinkTokens;
  publicUrl: string;
  /** The verified sender domains this replica remembers (createVerifiedSenderCache). */
  verifiedSenders: VerifiedSenderCache;
  /** SEND_ATTACHMENTS_MAX_BYTES; unset: SPEC.md's 10 MB. */
  attachmentMaxBytes?: number;
}) {
  const { renders, emails, verifiedSenders } = deps;

  return {
    /** Refuses (DOMAIN_NOT_VERIFIED) a sender whose domain is not verified for the project now, as /v1/send does. */
    async requireVerifiedSender(projectId: string, senderEmail: string): Promise<void> {
      requireProjectId(projectId);
      await verifiedSenders.require(projectId, domainOfAddress(senderEmail));
    },

    async send(projectId: string, request: SendRequest): Promise<{ emails: SentEmail[]; acceptedAt: Date }> {
      requireProjectId(projectId);
      const violations = sendRequestViolations(request, deps.attachmentMaxBytes);
      // What the send asks of the database before its writes is one statement; a malformed request asks only whether
      // its project is suspended.
      const addresses = violations.length === 0 ? request.to.map((recipient) => recipient.email) : [];
      const standings = await emails.standingOf(projectId, addresses, violations.length === 0 ? "TRANSACTIONAL" : undefined);
      // Before anything else: a suspended project learns why, whatever the request (docs/api-decisions.md "Reputation guard").
      refuseSuspended(standings, projectId);
      const [first] = violations;
      if (first) throw validationFailed(`Invalid ${first.field}: it ${first.message}`, violations);
      const template = request.templateId ? await deps.templates.get(projectId, request.templateId) : undefined;
      const sender = senderOf(request, template);
      await verifiedSenders.require(projectId, domainOfAddress(sender.email));
      const source = { subject: request.subject ?? template?.subject ?? "", body: request.body ?? template?.body ?? "" };
      const problems = await renders.validate(source);
      if (problems.length > 0) throw liquidFailure(problems);
      refuseSuppressed(standings, projectId, addresses);
      refuseOverCap(standings, projectId, "TRANSACTIONAL", request.to.length);
      const replyTo = request.replyTo ?? template?.replyTo ?? undefined;

      const recipients: Array<{
        to: MailboxInput;
        contactId: string;
        contactEmail: string;
        emailId: string;
        links: ReturnType<typeof recipientLinks>;
        data: RenderVariables["data"];
      }> = [];
      for (const recipient of request.to) {
        const { contact, variables } = await deps.upsertContact({
          projectId,
          email: recipient.email,
          subscribed: request.subscribed,
          data: request.data,
          source: ContactSource.SEND,
        });
        if (!contact) throw new Error("the contacts service answered an upsert without a contact");
        // Chosen before the render: the recipient's links in the body name their email.
        const emailId = randomUUID();
        const links = recipientLinks(deps.links, deps.publicUrl, projectId, contact.id, emailId);
        recipients.push({
          to: recipient,
          contactId: contact.id,
          contactEmail: contact.email,
          emailId,
          links,
          data: variables ?? contact.data ?? {},
        });
      }
      const outcome = await renders.render(
        source,
        recipients.map((recipient) => ({
          data: recipient.data,
          contact: { id: recipient.contactId, email: recipient.contactEmail },
          ...recipient.links,
        })),
        sendLimits.renderMs,
      );
      if ("failed" in outcome) {
        const { problem, outOfTime } = outcome.failed;
        if (outOfTime) {
          throw failed("body", `takes longer than ${sendLimits.renderMs} ms to render for all recipients of the call together`, "too_big");
        }
        throw liquidFailure([problem]);
      }

      const inputs = recipients.map((recipient, index): EmailInput => {
        const rendered = outcome.rendered[index];
        if (!rendered) throw new Error("the render threads answered fewer renders than recipients");
        const who = recipientField(request, index);
        if (rendered.subject === "") throw failed("subject", `renders to nothing for ${who}`, "too_small");
        if (rendered.subject.length > sendLimits.subject) {
          throw failed("subject", `renders longer than ${sendLimits.subject} characters for ${who}`, "too_big");
        }
        if (rendered.body === "") throw failed("body", `renders to nothing for ${who}`, "too_small");
        if (estimatedMessageBytes(rendered.body, rendered.subject, request.headers, request.attachments) > sendLimits.messageBytes) {
          throw failed("attachments", "make the message larger than 40 MB", "too_big");
        }
        return {
          id: recipient.emailId,
          ...(request.idempotencyKey ? { idempotencyKey: `${request.idempotencyKey}:${index}` } : {}),
          contactId: recipient.contactId,
          to: recipient.to,
          from: sender,
          ...(replyTo ? { replyTo: { email: replyTo } } : {}),
          subject: rendered.subject,
          html: rendered.body,
          headers: request.headers,
          attachments: request.attachments,
          category: "TRANSACTIONAL",
          // Marketing content by its sender's own label: one-click unsubscribe (RFC 8058), as Gmail's and Yahoo's bulk-sender rules expect.
          ...(template?.type === "MARKETING" ? { listUnsubscribe: { url: recipient.links.unsubscribeUrl } } : {}),
          ...(template ? { templateId: template.id } : {}),
        };
      });
      const stored = await emails.enqueueAll(projectId, inputs, { suppressionsChecked: true, suspensionChecked: true });
      return {
        emails: recipients.map((recipient, index) => ({
          contactId: recipient.contactId,
          contactEmail: recipient.contactEmail,
          emailId: stored[index]?.id ?? "",
        })),
        acceptedAt: new Date(),
      };
    },
  };
}
