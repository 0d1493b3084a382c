import type { JsonObject as ProtoJson } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import {
  ConditionError,
  type ConditionTree,
  evaluateCondition,
  type FieldType,
  referencesOf,
  type SegmentDefinition,
} from "@herald/conditions";
import type { ConditionSubjectsService } from "@herald/proto/herald/contacts/v1/condition_subjects_service_pb";
import type { ContactsService } from "@herald/proto/herald/contacts/v1/contacts_service_pb";
import { FieldType as ProtoFieldType } from "@herald/proto/herald/contacts/v1/resources_pb";
import { EmailKind, type EmailsService } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import type { TemplatesService } from "@herald/proto/herald/delivery/v1/templates_service_pb";
import { describeProblem } from "@herald/rendering";
import type { RenderPool } from "@herald/rendering/pool";
import {
  type DelayConfig,
  delayUnits,
  type JsonObject,
  type SendEmailConfig,
  type UpdateContactConfig,
  type WaitForEventConfig,
} from "../domain/step-config.js";
import type { StepExecutor, StepInput, StepOutcome } from "./step-outcome.js";

/** Errors of another service that a later attempt may not meet. */
const temporaryCodes = new Set([
  Code.Unavailable,
  Code.DeadlineExceeded,
  Code.ResourceExhausted,
  Code.Aborted,
  Code.Internal,
  Code.Unknown,
]);

/** A refusal of another service as an outcome: temporary ones are retried, the others fail the execution. */
export function outcomeOfError(error: unknown, what: string): StepOutcome {
  if (error instanceof ConnectError && !temporaryCodes.has(error.code)) return { kind: "fail", error: `${what}: ${error.rawMessage}` };
  if (error instanceof ConnectError && error.code === Code.ResourceExhausted)
    return { kind: "fail", error: `${what}: ${error.rawMessage}` };
  return { kind: "retry", error: `${what}: ${error instanceof Error ? error.message : String(error)}`, delayMs: 1_000 };
}

const protoFieldTypes: Partial<Record<ProtoFieldType, FieldType>> = {
  [ProtoFieldType.STRING]: "string",
  [ProtoFieldType.NUMBER]: "number",
  [ProtoFieldType.BOOLEAN]: "boolean",
  [ProtoFieldType.DATE]: "date",
};

/** Strings rendered where the recipient's own links go in a SEND_EMAIL; delivery, which signs the links, writes them in their place. */
export const recipientLinkMarkers = {
  unsubscribeUrl: "%%herald-unsubscribe-url%%",
  subscribeUrl: "%%herald-subscribe-url%%",
  manageUrl: "%%herald-manage-url%%",
} as const;

export interface StepClients {
  contacts: Client<typeof ContactsService>;
  conditionSubjects: Client<typeof ConditionSubjectsService>;
  emails: Client<typeof EmailsService>;
  templates: Client<typeof TemplatesService>;
}

/** The executors of the step types that need no network of their own (WEBHOOK is in webhook.ts). */
export function createStepExecutors(deps: {
  clients: StepClients;
  delayScale: number;
  /** Where SEND_EMAIL renders its Liquid (createRenderPool), off the event loop that fires the timers. */
  renders: RenderPool;
}): Record<string, StepExecutor> {
  const { contacts, conditionSubjects, emails, templates } = deps.clients;

  const exit: StepExecutor = async ({ step }) => ({ kind: "exit", reason: String(step.config.reason ?? "") || "Exited" });

  /** Waits from the moment the step was reached, so that a run claimed again after a crash keeps its due time. */
  const delay: StepExecutor = async ({ run, step }) => {
    if (run.wakeReason === "timer") return { kind: "next", branch: "" };
    const { amount, unit } = step.config as unknown as DelayConfig;
    const dueAt = new Date(run.createdAt.getTime() + amount * delayUnits[unit] * deps.delayScale);
    return { kind: "wait", dueAt, output: { dueAt: dueAt.toISOString() } };
  };

  const waitForEvent: StepExecutor = async ({ run, step }) => {
    if (run.wakeReason === "event") return { kind: "next", branch: "event", output: run.output };
    if (run.wakeReason === "timer") return { kind: "next", branch: "timeout", output: { timedOut: true } };
    const { eventName, timeout } = step.config as unknown as WaitForEventConfig;
    const dueAt = new Date(run.createdAt.getTime() + timeout * 1000);
    return { kind: "wait", dueAt, waitingFor: eventName, output: { eventName, timeoutAt: dueAt.toISOString() } };
  };

  const condition: StepExecutor = async ({ execution, step, now }) => {
    const tree = step.config.condition as unknown as ConditionTree;
    const references = referencesOf(tree);
    let subject: Awaited<ReturnType<typeof conditionSubjects.getConditionSubject>>;
    try {
      subject = await conditionSubjects.getConditionSubject({
        projectId: execution.projectId,
        contactId: execution.contactId,
        eventNames: references.events,
        segmentIds: references.segments,
      });
    } catch (error) {
      return outcomeOfError(error, "Reading the contact failed");
    }
    const contact = subject.contact;
    if (!contact) return { kind: "fail", error: "The contact no longer exists" };
    const types = new Map(subject.fields.map((field) => [field.key, protoFieldTypes[field.type]]));
    const segments = new Map<string, SegmentDefinition>(
      subject.segments.map((segment) => [
        segment.id.toLowerCase(),
        segment.type === "STATIC" ? { type: "STATIC" } : { type: "DYNAMIC", condition: segment.condition as unknown as ConditionTree },
      ]),
    );
    try {
      const matched = evaluateCondition(
        tree,
        {
          contact: {
            id: contact.id,
            email: contact.email,
            subscribed: contact.subscribed,
            createdAt: contact.createdAt ? timestampDate(contact.createdAt) : now,
            updatedAt: contact.updatedAt ? timestampDate(contact.updatedAt) : now,
            data: (contact.data ?? {}) as ProtoJson as JsonObject,
          },
          events: subject.events.map((event) => ({ name: event.name, createdAt: event.createdAt ? timestampDate(event.createdAt) : now })),
          segmentIds: new Set(subject.staticSegmentIds.map((id) => id.toLowerCase())),
          trigger: execution.triggerData,
          context: execution.context,
        },
        { now, fieldType: (key) => types.get(key), segment: (id) => segments.get(id), variables: true, root: "config.condition" },
      );
      return { kind: "next", branch: matched ? "yes" : "no", output: { result: matched } };
    } catch (error) {
      if (error instanceof ConditionError) return { kind: "fail", error: `The condition no longer holds together: ${error.message}` };
      throw error;
    }
  };

  /** Setting keys and the subscription is idempotent: a step run again after a crash writes the same values. */
  const updateContact: StepExecutor = async ({ execution, step }) => {
    const { data, subscribed } = step.config as unknown as UpdateContactConfig;
    try {
      await contacts.updateContact({
        projectId: execution.projectId,
        contactId: execution.contactId,
        ...(data === undefined ? {} : { data: data as ProtoJson }),
        ...(subscribed === undefined ? {} : { subscribed }),
      });
    } catch (error) {
      return outcomeOfError(error, "Updating the contact failed");
    }
    return {
      kind: "next",
      branch: "",
      output: { ...(data === undefined ? {} : { data }), ...(subscribed === undefined ? {} : { subscribed }) },
    };
  };

  const sendEmail: StepExecutor = async (input: StepInput) => {
    const { execution, step, run } = input;
    const config = step.config as unknown as SendEmailConfig;
    try {
      const { contact } = await contacts.getContact({ projectId: execution.projectId, contactId: execution.contactId });
      if (!contact) return { kind: "fail", error: "The contact no longer exists" };
      const template = config.templateId
        ? (await templates.getTemplate({ projectId: execution.projectId, id: config.templateId })).template
        : undefined;
      const subject = config.subject ?? template?.subject ?? "";
      const body = config.body ?? template?.body ?? "";
      const fromEmail = config.from ?? template?.from ?? "";
      const fromName = config.fromName ?? template?.fromName ?? "";
      const replyTo = config.replyTo ?? template?.replyTo ?? "";
      // The trigger's data and the execution's context beside the contact's data: {{trigger.data.plan}}, {{context.coupon}}.
      const data = {
        ...((contact.data ?? {}) as Record<string, unknown>),
        trigger: { name: execution.triggerEvent, data: execution.triggerData },
        context: execution.context,
      };
      // Mail to the contact gets the contact's own links, which delivery signs and writes where the markers are;
      // mail to a fixed address is not the contact's to unsubscribe from, and its links render empty.
      const toContact = !config.to;
      const [rendered] = await deps.renders.renderEach({ subject, body }, [
        { data, contact: { id: contact.id, email: contact.email }, ...(toContact ? recipientLinkMarkers : {}) },
      ]);
      if (!rendered) throw new Error("the render threads answered no render");
      if ("problem" in rendered) return { kind: "fail", error: `The email does not render: ${describeProblem(rendered.problem)}` };
      const to = config.to ?? contact.email;
      const answer = await emails.enqueueEmail({
        projectId: execution.projectId,
        // One email per step run, however often the run is retried or claimed again.
        idempotencyKey: `workflow-step:${run.id}`,
        contactId: toContact ? contact.id : "",
        ...(toContact ? { linkMarkers: recipientLinkMarkers } : {}),
        to: { email: to, name: "" },
        from: { email: fromEmail, name: fromName },
        ...(replyTo ? { replyTo: { email: replyTo, name: "" } } : {}),
        subject: rendered.subject,
        html: rendered.body,
        kind: EmailKind.WORKFLOW,
        templateId: config.templateId ?? "",
        workflowId: execution.workflowId,
        // The domain is checked as the step runs: one deleted or unverified since fails the step with the reason.
        requireVerifiedSender: true,
      });
      return { kind: "next", branch: "", output: { emailId: answer.emailId, to } };
    } catch (error) {
      return outcomeOfError(error, "Sending the email failed");
    }
  };

  return {
    EXIT: exit,
    DELAY: delay,
    WAIT_FOR_EVENT: waitForEvent,
    CONDITION: condition,
    UPDATE_CONTACT: updateContact,
    SEND_EMAIL: sendEmail,
  };
}
