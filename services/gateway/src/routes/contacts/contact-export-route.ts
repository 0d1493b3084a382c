import { Readable } from "node:stream";
import { Type } from "@fastify/type-provider-typebox";
import type { ExportContactResponse } from "@herald/proto/herald/contacts/v1/contacts_service_pb";
import type { Contact } from "@herald/proto/herald/contacts/v1/resources_pb";
import type { ExportedEmail } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import type { Upstreams } from "../../upstreams.js";
import { ExecutionSchema, toExecutionJson } from "../automation/workflow-json.js";
import { ActivitySchema, toActivityJson } from "../delivery/activity-json.js";
import { DateTime, iso, Nullable } from "../shared-schemas.js";
import { ContactSchema, EventSchema, toContactJson, toEventJson } from "./json.js";

/** How long one export may stream from each service: a long history is long to read, and nothing else waits on it. */
const exportTimeoutMs = 10 * 60_000;

const Mailbox = Type.Object({ email: Type.String(), name: Nullable(Type.String()) });

const ExportedEmailSchema = Type.Object({
  id: Type.String(),
  to: Mailbox,
  from: Mailbox,
  replyTo: Nullable(Type.String()),
  subject: Type.String(),
  html: Type.String(),
  headers: Type.Record(Type.String(), Type.String()),
  attachments: Type.Array(Type.Object({ filename: Type.String(), contentType: Type.String(), size: Type.Integer() })),
  category: Type.String(),
  status: Type.String(),
  templateId: Nullable(Type.String()),
  campaignId: Nullable(Type.String()),
  workflowId: Nullable(Type.String()),
  messageId: Type.String(),
  lastError: Nullable(Type.String()),
  createdAt: Nullable(DateTime),
  sentAt: Nullable(DateTime),
  openedAt: Nullable(DateTime),
  clickedAt: Nullable(DateTime),
  activity: Type.Array(ActivitySchema),
});

/** The document GET /contacts/:id/export answers (docs/api-decisions.md "Contact export"). */
export const ContactExportSchema = Type.Object({
  exportedAt: DateTime,
  contact: ContactSchema,
  events: Type.Array(EventSchema),
  segments: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), type: Type.String(), memberSince: Nullable(DateTime) })),
  emails: Type.Array(ExportedEmailSchema),
  received: Type.Array(ActivitySchema),
  executions: Type.Array(Type.Object({ ...ExecutionSchema.properties, workflowName: Type.String() })),
});

const orNull = (text: string): string | null => (text ? text : null);

const toExportedEmailJson = (email: ExportedEmail) => ({
  id: email.id,
  to: { email: email.toEmail, name: orNull(email.toName) },
  from: { email: email.fromEmail, name: orNull(email.fromName) },
  replyTo: orNull(email.replyTo),
  subject: email.subject,
  html: email.html,
  headers: Object.fromEntries(Object.entries(email.headers ?? {}).map(([name, value]) => [name, String(value)])),
  attachments: email.attachments.map(({ filename, contentType, size }) => ({ filename, contentType, size: Number(size) })),
  category: email.category,
  status: email.status,
  templateId: orNull(email.templateId),
  campaignId: orNull(email.campaignId),
  workflowId: orNull(email.workflowId),
  messageId: email.messageId,
  lastError: orNull(email.lastError),
  createdAt: iso(email.createdAt),
  sentAt: iso(email.sentAt),
  openedAt: iso(email.openedAt),
  clickedAt: iso(email.clickedAt),
  activity: email.activity.map(toActivityJson),
});

/** The JSON texts of a page's items, joined, each after a comma but the very first of its array. */
function itemsOf(items: unknown[], first: { value: boolean }): string {
  if (items.length === 0) return "";
  const text = items.map((item) => JSON.stringify(item)).join(",");
  const separator = first.value ? "" : ",";
  first.value = false;
  return separator + text;
}

/**
 * The export document, written as its parts arrive: contacts' stream (whose first message, the contact, the route
 * has read already), then delivery's, then automation's, each read a page at a time only as fast as the client
 * takes the text, so that a contact with a long history is never held whole in memory here or upstream.
 */
async function* exportDocument(
  upstreams: Upstreams,
  projectId: string,
  contact: Contact,
  rest: AsyncIterator<ExportContactResponse>,
): AsyncGenerator<string> {
  const options = { timeoutMs: exportTimeoutMs };
  yield `{"exportedAt":${JSON.stringify(new Date().toISOString())},"contact":${JSON.stringify(toContactJson(contact))},"events":[`;
  const first = { value: true };
  let segments: unknown[] = [];
  for (let next = await rest.next(); !next.done; next = await rest.next()) {
    const { part } = next.value;
    if (part.case === "events") yield itemsOf(part.value.events.map(toEventJson), first);
    else if (part.case === "segments") {
      segments = part.value.memberships.map((membership) => ({
        id: membership.segmentId,
        name: membership.name,
        type: membership.type,
        memberSince: iso(membership.memberSince),
      }));
    }
  }
  yield `],"segments":${JSON.stringify(segments)},"emails":[`;
  // Delivery sends the emails' pages first, then those of the messages received from the contact.
  let receiving = false;
  first.value = true;
  const mail = upstreams.emails.exportContactEmails({ projectId, contactId: contact.id, email: contact.email }, options);
  for await (const page of mail) {
    yield itemsOf(page.emails.map(toExportedEmailJson), first);
    if (page.received.length > 0 && !receiving) {
      receiving = true;
      first.value = true;
      yield `],"received":[`;
    }
    yield itemsOf(page.received.map(toActivityJson), first);
  }
  if (!receiving) yield `],"received":[`;
  yield `],"executions":[`;
  first.value = true;
  for await (const page of upstreams.workflows.exportContactExecutions({ projectId, contactId: contact.id }, options)) {
    yield itemsOf(
      page.executions.map((exported) => ({ ...toExecutionJson(exported.execution), workflowName: exported.workflowName })),
      first,
    );
  }
  yield "]}";
}

export function registerContactExportRoute(app: FastifyInstance, deps: { upstreams: Upstreams }): void {
  // Not through the TypeBox type provider: the answer is a stream of text, which Fastify sends without serializing it; the
  // response schema still documents the document in OpenAPI.
  app.get<{ Params: { id: string } }>(
    "/contacts/:id/export",
    {
      config: { auth: "project" },
      schema: {
        tags: ["Contacts"],
        summary: "Everything held about a contact, as one JSON document (data-subject access request), streamed",
        params: Type.Object({ id: Type.String({ minLength: 1 }) }),
        response: { 200: ContactExportSchema },
      },
    },
    async (request, reply) => {
      const projectId = projectOf(request);
      const parts = deps.upstreams.contacts
        .exportContact({ projectId, contactId: request.params.id }, { timeoutMs: exportTimeoutMs })
        [Symbol.asyncIterator]();
      // The contact comes first, alone: an unknown id (or another project's, or an erased contact) is a 404 before
      // anything is written.
      const first = await parts.next();
      if (first.done || first.value.part.case !== "contact") throw new Error("ExportContact answered no contact first");
      const document = Readable.from(exportDocument(deps.upstreams, projectId, first.value.part.value, parts), {
        objectMode: false,
        highWaterMark: 64 * 1024,
      });
      return reply
        .type("application/json; charset=utf-8")
        .header("content-disposition", `attachment; filename="contact-${first.value.part.value.id}.json"`)
        .send(document);
    },
  );
}
