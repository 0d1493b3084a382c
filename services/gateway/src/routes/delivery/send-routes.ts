import type { MessageInitShape } from "@bufbuild/protobuf";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { createCoalescer } from "@herald/platform";
import type { SendEmailRequestSchema, SendEmailResponse } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import { HttpProblem } from "../../http/errors.js";
import type { Upstreams } from "../../upstreams.js";
import { DataSchema, jsonDataOf } from "../contacts/json.js";
import { iso } from "../shared-schemas.js";

/**
 * A whole message may be 40 MB (SPEC.md "Limits"); its attachments arrive base64-encoded
 * in JSON, a third larger. Bodies past this are refused with 413 before they are parsed.
 */
const sendBodyLimit = 56 * 1024 * 1024;

/**
 * The longest `attachments[].content`: delivery's largest SEND_ATTACHMENTS_MAX_BYTES (28 MB) in base64,
 * with a CRLF after every 76 characters as MIME writes it. Delivery applies the configured limit to the decoded bytes.
 */
const attachmentContentMaxLength = Math.ceil(Math.ceil((28 * 1024 * 1024) / 3) * 4 * (78 / 76));

const Mailbox = Type.Object({ email: Type.String({ maxLength: 1_000 }), name: Type.Optional(Type.String({ maxLength: 1_000 })) });
const Recipient = Type.Union([Type.String({ maxLength: 1_000 }), Mailbox]);

const SendBody = Type.Object({
  to: Type.Union([Recipient, Type.Array(Recipient)]),
  subject: Type.Optional(Type.String()),
  body: Type.Optional(Type.String()),
  template: Type.Optional(Type.String({ maxLength: 100 })),
  from: Type.Optional(Recipient),
  name: Type.Optional(Type.String({ maxLength: 1_000 })),
  subscribed: Type.Optional(Type.Boolean()),
  data: Type.Optional(DataSchema),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  reply: Type.Optional(Type.String({ maxLength: 1_000 })),
  attachments: Type.Optional(
    Type.Array(
      Type.Object({
        filename: Type.String({ maxLength: 1_000 }),
        content: Type.String({ maxLength: attachmentContentMaxLength }),
        contentType: Type.String({ maxLength: 255 }),
      }),
      // Counted again by delivery (10); this only bounds the work of a hostile body.
      { maxItems: 100 },
    ),
  ),
});

const SendAnswer = Type.Object({
  success: Type.Boolean(),
  data: Type.Object({
    emails: Type.Array(Type.Object({ contact: Type.Object({ id: Type.String(), email: Type.String() }), email: Type.String() })),
    timestamp: Type.String(),
  }),
});

/** Sends per SendEmails call: enough to carry a busy event-loop turn, small enough to keep one call short. */
const sendBatchSize = 64;

/**
 * Base64 with line breaks anywhere, then up to two `=` and more line breaks, in two scans that cannot backtrack:
 * the single pattern this replaces was quadratic on a long run of newlines followed by `!` (issue 20).
 */
function isBase64(content: string): boolean {
  if (/[^A-Za-z0-9+/=\r\n]/.test(content)) return false;
  const padding = content.indexOf("=");
  return padding < 0 || /^={1,2}[\r\n]*$/.test(content.slice(padding));
}

const mailboxOf = (recipient: string | { email: string; name?: string }) =>
  typeof recipient === "string" ? { email: recipient, name: "" } : { email: recipient.email, name: recipient.name ?? "" };

function decodeAttachment(content: string, index: number): Uint8Array {
  if (!isBase64(content)) {
    throw new HttpProblem({
      statusCode: 422,
      code: "VALIDATION_ERROR",
      message: `Invalid attachments[${index}].content: it must be base64`,
      errors: [{ field: `attachments[${index}].content`, message: "must be base64", code: "invalid_string" }],
    });
  }
  return Buffer.from(content, "base64");
}

export function registerSendRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { emails } = deps.upstreams;
  type SendRequest = MessageInitShape<typeof SendEmailRequestSchema>;
  const sendCoalesced = createCoalescer<SendRequest, SendEmailResponse>({
    maxBatch: sendBatchSize,
    call: async (requests) => (await emails.sendEmails({ requests })).results,
  });
  // Concurrent sends to one recipient share SendEmails calls. A batch answers when its slowest item is
  // done, so a send that takes longer (several recipients in turn, attachments of up to 40 MB) goes alone.
  const sendAlone = (request: SendRequest) => emails.sendEmail(request);

  api.post(
    "/v1/send",
    {
      config: { auth: "secret", idempotency: true },
      bodyLimit: sendBodyLimit,
      schema: {
        tags: ["Send"],
        summary: "Send a transactional email to one or more recipients, creating or updating each as a contact (secret key)",
        security: [{ secretKey: [] }],
        body: SendBody,
        response: { 200: SendAnswer },
      },
    },
    async (request) => {
      const body = request.body;
      const attachments = (body.attachments ?? []).map((attachment, index) => ({
        filename: attachment.filename,
        content: decodeAttachment(attachment.content, index),
        contentType: attachment.contentType,
      }));
      const to = (Array.isArray(body.to) ? body.to : [body.to]).map(mailboxOf);
      const send = to.length === 1 && attachments.length === 0 ? sendCoalesced : sendAlone;
      const answer = await send({
        projectId: projectOf(request),
        idempotencyKey: request.idempotencyClaim ?? "",
        to,
        subject: body.subject,
        body: body.body,
        templateId: body.template ?? "",
        from: body.from === undefined ? undefined : mailboxOf(body.from),
        // SPEC.md: the deprecated name counts only beside a from given as a string.
        senderName: typeof body.from === "string" || body.from === undefined ? (body.name ?? "") : "",
        subscribed: body.subscribed,
        data: jsonDataOf(body.data),
        headers: body.headers ?? {},
        replyTo: body.reply ?? "",
        attachments,
      });
      return {
        success: true,
        data: {
          emails: answer.emails.map((sent) => ({ contact: { id: sent.contactId, email: sent.contactEmail }, email: sent.emailId })),
          timestamp: iso(answer.acceptedAt) ?? new Date().toISOString(),
        },
      };
    },
  );
}
