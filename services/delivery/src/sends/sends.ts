import { createHash, randomUUID } from "node:crypto";
import { validationFailed } from "@herald/errors";
import { createCache } from "@herald/platform";
import { ContactSource } from "@herald/proto/herald/contacts/v1/resources_pb";
import { type CompiledTemplate, liquidFailure, type Renderer, TemplateError } from "@herald/rendering";
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
import type { Emails } from "../emails/emails.js";
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

/** Compiled templates kept per process: a busy sender renders the same few sources over and over. */
const compiledCacheSize = 500;

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
 * included) and rendered; the emails of the call are enqueued together. Rendering can still
 * fail for one recipient (a sandbox limit hit by its data), and the enqueue can still meet
 * the cap (concurrent calls took the rest): the call is refused and nothing is enqueued,
 * though the contacts keep their update.
 */
export function createSends(deps: {
  db: Db;
  renderer: Renderer;
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
  const { renderer, emails } = deps;
  // A source compiles to the same template for ever: the time to live only lets the sources no longer sent go.
  const compiled = createCache<string, CompiledTemplate>({ max: compiledCacheSize, ttlMs: 60 * 60_000 });
  const { verifiedSenders } = deps;

  function compile(subject: string, body: string): CompiledTemplate {
    const key = createHash("sha256").update(subject).update("\0").update(body).digest("base64");
    const cached = compiled.peek(key);
    if (cached) return cached;
    const problems = renderer.validate({ subject, body });
    if (problems.length > 0) throw liquidFailure(problems);
    const template = renderer.compile({ subject, body });
    compiled.set(key, template);
    return template;
  }

  return {
    async send(projectId: string, request: SendRequest): Promise<{ emails: SentEmail[]; acceptedAt: Date }> {
      requireProjectId(projectId);
      const violations = sendRequestViolations(request, deps.attachmentMaxBytes);
      const [first] = violations;
      if (first) throw validationFailed(`Invalid ${first.field}: it ${first.message}`, violations);
      const template = request.templateId ? await deps.templates.get(projectId, request.templateId) : undefined;
      const sender = senderOf(request, template);
      await verifiedSenders.require(projectId, domainOfAddress(sender.email));
      const source = compile(request.subject ?? template?.subject ?? "", request.body ?? template?.body ?? "");
      await emails.refuseSuppressed(
        projectId,
        request.to.map((recipient) => recipient.email),
      );
      await emails.refuseOverCap(projectId, "TRANSACTIONAL", request.to.length);
      const replyTo = request.replyTo ?? template?.replyTo ?? undefined;

      const inputs: EmailInput[] = [];
      const sent: Array<Omit<SentEmail, "emailId">> = [];
      // One budget for the call's renders; the upserts between them wait on the network, and do not count.
      let renderSpentMs = 0;
      for (const [index, recipient] of request.to.entries()) {
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
        let rendered: { subject: string; body: string };
        const links = recipientLinks(deps.links, deps.publicUrl, projectId, contact.id, emailId);
        const renderStart = performance.now();
        try {
          rendered = renderer.render(
            source,
            {
              data: variables ?? contact.data ?? {},
              contact: { id: contact.id, email: contact.email },
              ...links,
            },
            { timeMs: sendLimits.renderMs - renderSpentMs },
          );
        } catch (error) {
          if (
            error instanceof TemplateError &&
            error.problem.kind === "limit" &&
            renderSpentMs + performance.now() - renderStart >= sendLimits.renderMs
          ) {
            throw failed(
              "body",
              `takes longer than ${sendLimits.renderMs} ms to render for all recipients of the call together`,
              "too_big",
            );
          }
          if (error instanceof TemplateError) throw liquidFailure([error.problem]);
          throw error;
        }
        renderSpentMs += performance.now() - renderStart;
        const who = recipientField(request, index);
        if (rendered.subject === "") throw failed("subject", `renders to nothing for ${who}`, "too_small");
        if (rendered.subject.length > sendLimits.subject) {
          throw failed("subject", `renders longer than ${sendLimits.subject} characters for ${who}`, "too_big");
        }
        if (rendered.body === "") throw failed("body", `renders to nothing for ${who}`, "too_small");
        if (estimatedMessageBytes(rendered.body, rendered.subject, request.headers, request.attachments) > sendLimits.messageBytes) {
          throw failed("attachments", "make the message larger than 40 MB", "too_big");
        }
        inputs.push({
          id: emailId,
          ...(request.idempotencyKey ? { idempotencyKey: `${request.idempotencyKey}:${index}` } : {}),
          contactId: contact.id,
          to: recipient,
          from: sender,
          ...(replyTo ? { replyTo: { email: replyTo } } : {}),
          subject: rendered.subject,
          html: rendered.body,
          headers: request.headers,
          attachments: request.attachments,
          category: "TRANSACTIONAL",
          // Marketing content by its sender's own label: one-click unsubscribe (RFC 8058), as Gmail's and Yahoo's bulk-sender rules expect.
          ...(template?.type === "MARKETING" ? { listUnsubscribe: { url: links.unsubscribeUrl } } : {}),
          ...(template ? { templateId: template.id } : {}),
        });
        sent.push({ contactId: contact.id, contactEmail: contact.email });
      }
      const stored = await emails.enqueueAll(projectId, inputs, { suppressionsChecked: true });
      return {
        emails: sent.map((contact, index) => ({ ...contact, emailId: stored[index]?.id ?? "" })),
        acceptedAt: new Date(),
      };
    },
  };
}
