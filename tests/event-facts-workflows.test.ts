import { randomUUID } from "node:crypto";
import { topics } from "@herald/kafka";
import { WorkflowExecutionEventSchema } from "@herald/proto/herald/events/v1/workflow_execution_event_pb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { payloadIn, type ReceivedFact, watchTopic } from "./support/event-facts.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import { type ExecutionJson, finished, workflowBuilder } from "./support/workflows.js";

const { stack, kafkaBrokers } = inject("herald");
const call = restClient(stack.gatewayUrl);

const eventName = (label: string) => `${label}_${randomUUID().slice(0, 8)}`;

/**
 * automation's facts on herald.workflow-executions.v1 (the webhooks' workflow.execution.completed and
 * workflow.execution.failed), keyed by the execution's contact, read by a consumer of the test's own.
 */
describe("workflow executions on herald.workflow-executions.v1", () => {
  let project: CreatedProject;
  let flows: ReturnType<typeof workflowBuilder>;
  let topic: Awaited<ReturnType<typeof watchTopic>>;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "facts-workflows")).cookie, "Workflow facts");
    flows = workflowBuilder(call, project.secretKey);
    topic = await watchTopic({ brokers: kafkaBrokers, topic: topics.workflowExecutions, projectId: project.id });
  });

  afterAll(async () => {
    await topic?.stop();
  });

  const execution = (fact: ReceivedFact) => ({ type: fact.envelope.type, ...payloadIn(fact, WorkflowExecutionEventSchema) });
  const track = async (email: string, event: string) => {
    const answer = await call<{ data: { contact: string } }>("POST", "/v1/track", { key: project.publicKey, body: { email, event } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.data.contact;
  };
  const ended = async (workflowId: string, contactId: string) => {
    const all = await flows.executionsWhen(workflowId, (executions) =>
      executions.some((candidate) => candidate.contactId === contactId && finished(candidate)),
    );
    const listed = all.find((candidate) => candidate.contactId === contactId) as ExecutionJson;
    // The list has no steps; the execution itself has them.
    return flows.executionWhen(workflowId, listed.id, finished);
  };

  it("an execution that runs to its last step is a workflow.execution.completed, keyed by its contact, whichever step ends it", async () => {
    const event = eventName("completes");
    // One ends on a step the runner records, one on a DELAY whose timer fires.
    const updating = await flows.create({
      eventName: event,
      steps: [{ ref: "mark", type: "UPDATE_CONTACT", config: { data: { done: true } } }],
    });
    const delaying = await flows.create({
      eventName: event,
      steps: [{ ref: "wait", type: "DELAY", config: { amount: 1, unit: "minutes" } }],
    });
    const contactId = await track(uniqueEmail("completes"), event);
    for (const workflow of [updating, delaying]) {
      const done = await ended(workflow.id, contactId);
      expect(done.status).toBe("COMPLETED");
      const fact = await topic.next((candidate) => execution(candidate).executionId === done.id);
      expect(fact.key).toBe(contactId);
      expect(fact.envelope).toMatchObject({ contactId, source: "automation" });
      expect(execution(fact)).toEqual(
        expect.objectContaining({
          type: "workflow.execution.completed",
          workflowId: workflow.id,
          workflowName: `wf ${event}`,
          triggerEvent: event,
          failedStepId: "",
          error: "",
        }),
      );
    }
  }, 120_000);

  it("an execution whose step fails is a workflow.execution.failed with the step and the error; one that exits or is cancelled has none", async () => {
    const event = eventName("fails");
    const failing = await flows.create({
      eventName: event,
      steps: [{ ref: "mail", type: "SEND_EMAIL", config: { templateId: "00000000-0000-4000-8000-000000000000" } }],
    });
    const exiting = await flows.create({ eventName: event, steps: [{ ref: "end", type: "EXIT", config: { reason: "done" } }] });
    const waiting = await flows.create({ eventName: event, steps: [{ ref: "wait", type: "DELAY", config: { amount: 1, unit: "days" } }] });
    const email = uniqueEmail("fails");
    const contactId = await track(email, event);

    const failed = await ended(failing.id, contactId);
    expect(failed.status).toBe("FAILED");
    const fact = await topic.next((candidate) => execution(candidate).executionId === failed.id);
    expect(fact.key).toBe(contactId);
    expect(execution(fact)).toEqual(
      expect.objectContaining({
        type: "workflow.execution.failed",
        workflowId: failing.id,
        triggerEvent: event,
        failedStepId: failing.steps.mail?.id,
        error: failed.steps[0]?.error,
      }),
    );
    expect(execution(fact).error).toMatch(/not found/i);

    expect((await ended(exiting.id, contactId)).status).toBe("EXITED");
    const [held] = await flows.executionsWhen(waiting.id, (executions) =>
      executions.some((candidate) => candidate.contactId === contactId),
    );
    const cancelled = await call("DELETE", `/workflows/${waiting.id}/executions/${held?.id}`, { key: project.secretKey });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect((await ended(waiting.id, contactId)).status).toBe("CANCELLED");
    // A marker execution after them: once its event is here, theirs would have been too.
    const marker = await flows.create({
      eventName: eventName("marker"),
      steps: [{ ref: "mark", type: "UPDATE_CONTACT", config: { data: {} } }],
    });
    const started = await call<ExecutionJson>("POST", `/workflows/${marker.id}/executions`, { key: project.secretKey, body: { email } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    await topic.next((candidate) => execution(candidate).executionId === started.body.id);
    const workflowsWithEvents = new Set(topic.received.map((candidate) => execution(candidate).workflowId));
    expect(workflowsWithEvents.has(exiting.id)).toBe(false);
    expect(workflowsWithEvents.has(waiting.id)).toBe(false);
  }, 120_000);
});
