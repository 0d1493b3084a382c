import { availableParallelism } from "node:os";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { createCoalescer } from "@herald/platform";
import type { SendEmailRequestSchema, SendEmailResponse } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { Piscina } from "piscina";
import { projectOf } from "../../auth/authenticate.js";
import { nestedTooDeep } from "../../http/body-depth.js";
import { HttpProblem } from "../../http/errors.js";
import type { Upstreams } from "../../upstreams.js";
import { DataSchema, jsonDataOf } from "../contacts/json.js";
import { iso } from "../shared-schemas.js";
import { type ParsedSendBody, parseSendBody } from "./send-body.js";

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

const mailboxOf = (recipient: string | { email: string; name?: string }) =>
  typeof recipient === "string" ? { email: recipient, name: "" } : { email: recipient.email, name: recipient.name ?? "" };

const notBase64 = (index: number) =>
  new HttpProblem({
    statusCode: 422,
    code: "VALIDATION_ERROR",
    message: `Invalid attachments[${index}].content: it must be base64`,
    errors: [{ field: `attachments[${index}].content`, message: "must be base64", code: "invalid_string" }],
  });

/** As the schema's own maxLength would answer, without the value (or the counting of its 40 million characters). */
const contentTooLong = (index: number) =>
  new HttpProblem({
    statusCode: 422,
    code: "VALIDATION_ERROR",
    message: "Request validation failed",
    errors: [
      {
        field: `attachments.${index}.content`,
        message: `must NOT have more than ${attachmentContentMaxLength} characters`,
        code: "invalid_maxLength",
      },
    ],
  });

const invalidJson = () => new HttpProblem({ statusCode: 400, code: "INVALID_JSON", message: "The request body is not valid JSON" });

/** Bodies up to this size are parsed on the event loop (a few milliseconds); larger ones in a worker thread. */
const inlineBodyLimit = 256 * 1024;

// Compiled, the thread's entry is the .js beside this file; in the tests, which run the sources, the .ts itself.
const parserThread = new URL(import.meta.url.endsWith(".ts") ? "./send-body.ts" : "./send-body.js", import.meta.url);

export async function registerSendRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): Promise<void> {
  // Threads start with the first large body and stop after a minute without one.
  const parsers = new Piscina<{ bytes: Uint8Array; maxContentLength: number }, ParsedSendBody | undefined>({
    filename: parserThread.href,
    minThreads: 0,
    maxThreads: Math.min(2, availableParallelism()),
    idleTimeout: 60_000,
  });
  app.addHook("onClose", () => parsers.close());
  /** The attachments each body's parse decoded, by body. */
  const decodedContents = new WeakMap<object, ParsedSendBody["contents"]>();

  // The route's own JSON parser, in a scope of its own: the route's hooks and error handling are the application's.
  await app.register(async (scope) => {
    scope.removeContentTypeParser("application/json");
    scope.addContentTypeParser(
      "application/json",
      { parseAs: "buffer", bodyLimit: sendBodyLimit },
      async (_request: FastifyRequest, raw: Buffer) => {
        let parsed: ParsedSendBody | undefined;
        if (raw.byteLength <= inlineBodyLimit) {
          parsed = parseSendBody(raw, attachmentContentMaxLength);
        } else {
          // Fastify's concatenated body owns its memory when this large: moved to the thread rather than copied.
          const bytes = raw.byteLength === raw.buffer.byteLength ? raw : new Uint8Array(raw);
          parsed = await parsers.run(
            { bytes, maxContentLength: attachmentContentMaxLength },
            { transferList: [bytes.buffer as ArrayBuffer] },
          );
        }
        if (!parsed) throw invalidJson();
        if (parsed.tooLong !== undefined) throw contentTooLong(parsed.tooLong);
        if (parsed.tooDeep !== undefined) throw nestedTooDeep(parsed.tooDeep);
        if (typeof parsed.body === "object" && parsed.body !== null) decodedContents.set(parsed.body, parsed.contents);
        return parsed.body;
      },
    );
    registerSendRoute(scope, deps, decodedContents);
  });
}

function registerSendRoute(
  app: FastifyInstance,
  deps: { upstreams: Upstreams },
  decodedContents: WeakMap<object, ParsedSendBody["contents"]>,
): void {
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
      const decoded = decodedContents.get(body) ?? [];
      const attachments = (body.attachments ?? []).map((attachment, index) => {
        const content = decoded[index];
        if (!content) throw notBase64(index);
        return { filename: attachment.filename, content, contentType: attachment.contentType };
      });
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
