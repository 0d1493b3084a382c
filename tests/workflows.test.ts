import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

type Step = {
  id: string;
  type: string;
  name: string;
  config: Record<string, unknown>;
  position: { x: number; y: number };
  templateId: string | null;
};
type Transition = {
  id: string;
  fromStepId: string;
  toStepId: string;
  branch: string | null;
  condition: { branch: string } | null;
  priority: number;
};
type Workflow = {
  id: string;
  name: string;
  description: string;
  triggerType: string;
  triggerConfig: { eventName: string };
  enabled: boolean;
  allowReentry: boolean;
  steps: Step[];
  transitions: Transition[];
};

describe("workflows: the model and its API", () => {
  let project: CreatedProject;
  let other: CreatedProject;
  let key: string;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "wf")).cookie, "Workflows");
    other = await createProject(call, (await signUp(call, "wf-other")).cookie, "Other");
    key = project.secretKey;
  });
  afterAll(() => {});

  const api = <T = Workflow>(method: string, path: string, body?: unknown, as = key) =>
    call<T & ErrorBody>(method, path, { key: as, ...(body === undefined ? {} : { body }) });
  const newWorkflow = async (body: Record<string, unknown> = {}) => {
    const answer = await api("POST", "/workflows", { name: "Welcome", eventName: "signed_up", ...body });
    expect(answer.status).toBe(201);
    return answer.body;
  };
  const addStep = async (workflowId: string, body: Record<string, unknown>) => {
    const answer = await api<Step>("POST", `/workflows/${workflowId}/steps`, body);
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body;
  };
  const connect = async (workflowId: string, fromStepId: string, toStepId: string, branch?: string) => {
    const answer = await api<Transition>("POST", `/workflows/${workflowId}/transitions`, {
      fromStepId,
      toStepId,
      ...(branch ? { branch } : {}),
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body;
  };

  it("creates a workflow disabled with an EVENT trigger, lists it and returns it with its steps and transitions", async () => {
    const workflow = await newWorkflow({ description: "Greets new users" });
    expect(workflow).toMatchObject({
      name: "Welcome",
      description: "Greets new users",
      triggerType: "EVENT",
      triggerConfig: { eventName: "signed_up" },
      enabled: false,
      allowReentry: false,
      steps: [],
      transitions: [],
    });
    const delay = await addStep(workflow.id, {
      type: "DELAY",
      name: "Wait",
      config: { amount: 1, unit: "days" },
      position: { x: 10, y: 20 },
    });
    const exit = await addStep(workflow.id, { type: "EXIT", name: "Done", config: { reason: "greeted" } });
    const link = await api<Transition>("POST", `/workflows/${workflow.id}/transitions`, { fromStepId: delay.id, toStepId: exit.id });
    expect(link.status).toBe(201);
    const fetched = await api("GET", `/workflows/${workflow.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.steps.map((step) => step.id)).toEqual([delay.id, exit.id]);
    expect(fetched.body.steps[0]).toMatchObject({ type: "DELAY", config: { amount: 1, unit: "days" }, position: { x: 10, y: 20 } });
    expect(fetched.body.transitions).toEqual([
      expect.objectContaining({ fromStepId: delay.id, toStepId: exit.id, branch: null, condition: null }),
    ]);
    const list = await api<Workflow[]>("GET", "/workflows");
    expect(list.body.map((item) => item.id)).toContain(workflow.id);
  });

  it("changes name, trigger, enabled and allowReentry with PATCH", async () => {
    const workflow = await newWorkflow();
    const exit = await addStep(workflow.id, { type: "EXIT", name: "Done" });
    expect(exit.config).toEqual({ reason: "" });
    const patched = await api("PATCH", `/workflows/${workflow.id}`, {
      name: "Renamed",
      triggerType: "EVENT",
      triggerConfig: { eventName: "paid" },
      enabled: true,
      allowReentry: true,
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({ name: "Renamed", triggerConfig: { eventName: "paid" }, enabled: true, allowReentry: true });
    const disabled = await api("PATCH", `/workflows/${workflow.id}`, { enabled: false });
    expect(disabled.body.enabled).toBe(false);
  });

  it("refuses to enable a graph with no entry step, two entry steps, a missing branch or a cycle without a wait, saying why", async () => {
    const empty = await newWorkflow();
    const noSteps = await api("PATCH", `/workflows/${empty.id}`, { enabled: true });
    expect(noSteps.status).toBe(400);
    expect(noSteps.body.error).toMatchObject({ code: "WORKFLOW_INVALID", statusCode: 400 });
    expect(noSteps.body.error.message).toMatch(/no steps/);

    const two = await newWorkflow();
    await addStep(two.id, { type: "EXIT", name: "A" });
    await addStep(two.id, { type: "EXIT", name: "B" });
    expect((await api("PATCH", `/workflows/${two.id}`, { enabled: true })).body.error.message).toMatch(/2 entry steps/);

    const branching = await newWorkflow();
    const condition = await addStep(branching.id, {
      type: "CONDITION",
      name: "Pro?",
      config: { condition: { logic: "AND", groups: [{ filters: [{ field: "data.plan", operator: "equals", value: "pro" }] }] } },
    });
    const yes = await addStep(branching.id, { type: "EXIT", name: "Yes" });
    await connect(branching.id, condition.id, yes.id, "yes");
    expect((await api("PATCH", `/workflows/${branching.id}`, { enabled: true })).body.error.message).toMatch(/has no "no" branch/);
    const no = await addStep(branching.id, { type: "EXIT", name: "No" });
    await connect(branching.id, condition.id, no.id, "no");
    expect((await api("PATCH", `/workflows/${branching.id}`, { enabled: true })).status).toBe(200);

    const looping = await newWorkflow();
    const first = await addStep(looping.id, { type: "UPDATE_CONTACT", name: "First", config: { data: { seen: true } } });
    const a = await addStep(looping.id, { type: "UPDATE_CONTACT", name: "A", config: { data: { a: 1 } } });
    const b = await addStep(looping.id, { type: "UPDATE_CONTACT", name: "B", config: { data: { b: 1 } } });
    await connect(looping.id, first.id, a.id);
    await connect(looping.id, a.id, b.id);
    await connect(looping.id, b.id, a.id);
    const spinning = await api("PATCH", `/workflows/${looping.id}`, { enabled: true });
    expect(spinning.status).toBe(400);
    expect(spinning.body.error.message).toMatch(/cycle with no DELAY or WAIT_FOR_EVENT/);
  });

  it("validates each step type's config, naming the field (422)", async () => {
    const workflow = await newWorkflow();
    const refused = async (body: Record<string, unknown>, field: string) => {
      const answer = await api<ErrorBody>("POST", `/workflows/${workflow.id}/steps`, { name: "Bad", ...body });
      expect(answer.status, JSON.stringify(answer.body)).toBe(422);
      expect(answer.body.success).toBe(false);
      expect(answer.body.error.code).toBe("VALIDATION_ERROR");
      expect(answer.body.error.errors?.map((error) => error.field)).toContain(field);
    };
    await refused({ type: "DELAY", config: { amount: 0, unit: "days" } }, "config.amount");
    await refused({ type: "DELAY", config: { amount: 2, unit: "fortnights" } }, "config.unit");
    await refused({ type: "WAIT_FOR_EVENT", config: { eventName: "paid" } }, "config.timeout");
    await refused({ type: "SEND_EMAIL", config: { subject: "Hi" } }, "config.body");
    await refused({ type: "SEND_EMAIL", config: { subject: "Hi", body: "<p>x</p>", from: "not-an-address" } }, "config.from");
    await refused({ type: "WEBHOOK", config: { url: "ftp://example.com/hook" } }, "config.url");
    await refused({ type: "WEBHOOK", config: { url: "file:///etc/passwd" } }, "config.url");
    await refused({ type: "UPDATE_CONTACT", config: {} }, "config.data");
    await refused(
      {
        type: "CONDITION",
        config: { condition: { logic: "AND", groups: [{ filters: [{ field: "data.plan", operator: "sortOf", value: "x" }] }] } },
      },
      "config.condition.groups[0].filters[0].operator",
    );
    await refused(
      {
        type: "CONDITION",
        config: { condition: { logic: "AND", groups: [{ filters: [{ field: "nonsense", operator: "equals", value: "x" }] }] } },
      },
      "config.condition.groups[0].filters[0].field",
    );
    const unknownType = await api<ErrorBody>("POST", `/workflows/${workflow.id}/steps`, { name: "Bad", type: "TELEPORT", config: {} });
    expect([400, 422]).toContain(unknownType.status);
    expect(unknownType.body.success).toBe(false);
  });

  it("accepts trigger.data and context notations in a CONDITION", async () => {
    const workflow = await newWorkflow();
    const step = await addStep(workflow.id, {
      type: "CONDITION",
      name: "Big order?",
      config: {
        condition: {
          logic: "AND",
          groups: [
            {
              filters: [
                { field: "trigger.data.total", operator: "gt", value: 100 },
                { field: "context.vip", operator: "equals", value: true },
              ],
            },
          ],
        },
      },
    });
    expect(step.config).toMatchObject({ condition: { groups: [{ filters: [{ operator: "greaterThan" }, { operator: "equals" }] }] } });
  });

  it("checks transitions: branches by step type, and steps of the same workflow", async () => {
    const workflow = await newWorkflow();
    const condition = await addStep(workflow.id, { type: "CONDITION", name: "C", config: { condition: { logic: "AND", groups: [] } } });
    const wait = await addStep(workflow.id, { type: "WAIT_FOR_EVENT", name: "W", config: { eventName: "paid", timeout: 60 } });
    const exit = await addStep(workflow.id, { type: "EXIT", name: "E" });
    const refused = async (body: Record<string, unknown>, status: number, field?: string) => {
      const answer = await api<ErrorBody>("POST", `/workflows/${workflow.id}/transitions`, body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(status);
      if (field) expect(answer.body.error.errors?.[0]?.field).toBe(field);
      return answer;
    };
    await refused({ fromStepId: condition.id, toStepId: exit.id }, 422, "branch");
    await refused({ fromStepId: condition.id, toStepId: exit.id, branch: "maybe" }, 422, "branch");
    await refused({ fromStepId: wait.id, toStepId: exit.id, branch: "yes" }, 422, "branch");
    await refused({ fromStepId: exit.id, toStepId: wait.id }, 422, "fromStepId");
    await refused({ fromStepId: wait.id, toStepId: "00000000-0000-4000-8000-000000000000", branch: "event" }, 404);
    // Plunk's shape: the branch inside condition.
    const yes = await api<Transition>("POST", `/workflows/${workflow.id}/transitions`, {
      fromStepId: condition.id,
      toStepId: wait.id,
      condition: { branch: "yes" },
    });
    expect(yes.status).toBe(201);
    expect(yes.body).toMatchObject({ branch: "yes", condition: { branch: "yes" } });
    await refused({ fromStepId: condition.id, toStepId: wait.id, condition: { branch: "yes" } }, 409);
    const timeout = await connect(workflow.id, wait.id, exit.id, "timeout");
    const removed = await api("DELETE", `/workflows/${workflow.id}/transitions/${timeout.id}`);
    expect(removed.status).toBe(204);
    expect((await api("DELETE", `/workflows/${workflow.id}/transitions/${timeout.id}`)).status).toBe(404);
  });

  it("updates a step's config (validated again) and deletes a step, splicing its neighbours together", async () => {
    const workflow = await newWorkflow();
    const a = await addStep(workflow.id, { type: "UPDATE_CONTACT", name: "A", config: { data: { a: 1 } } });
    const b = await addStep(workflow.id, { type: "DELAY", name: "B", config: { amount: 1, unit: "hours" } });
    const c = await addStep(workflow.id, { type: "EXIT", name: "C" });
    await connect(workflow.id, a.id, b.id);
    await connect(workflow.id, b.id, c.id);
    const patched = await api<Step>("PATCH", `/workflows/${workflow.id}/steps/${b.id}`, {
      name: "Two hours",
      config: { amount: 2, unit: "hours" },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: "Two hours", config: { amount: 2, unit: "hours" } });
    const bad = await api<ErrorBody>("PATCH", `/workflows/${workflow.id}/steps/${b.id}`, { config: { amount: -1, unit: "hours" } });
    expect(bad.status).toBe(422);
    expect((await api("DELETE", `/workflows/${workflow.id}/steps/${b.id}?splice=true`)).status).toBe(204);
    const after = await api("GET", `/workflows/${workflow.id}`);
    expect(after.body.steps.map((step) => step.id)).toEqual([a.id, c.id]);
    expect(after.body.transitions).toEqual([expect.objectContaining({ fromStepId: a.id, toStepId: c.id })]);
    expect((await api("DELETE", `/workflows/${workflow.id}/steps/${c.id}`)).status).toBe(204);
    expect((await api("GET", `/workflows/${workflow.id}`)).body.transitions).toEqual([]);
  });

  it("answers bad input with the SPEC envelope", async () => {
    const missing = await api<ErrorBody>("POST", "/workflows", { name: "No trigger" });
    expect([400, 422]).toContain(missing.status);
    expect(missing.body).toMatchObject({ success: false, error: { statusCode: missing.status } });
    const badEvent = await api<ErrorBody>("POST", "/workflows", { name: "Bad", eventName: "has spaces in it" });
    expect(badEvent.status).toBe(422);
    expect(badEvent.body.error.errors?.[0]?.field).toBe("eventName");
    const unknown = await api<ErrorBody>("GET", "/workflows/00000000-0000-4000-8000-000000000000");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("NOT_FOUND");
    expect((await api<ErrorBody>("GET", "/workflows/not-a-uuid")).status).toBe(404);
    const badStatus = await api<ErrorBody>("GET", `/workflows/${(await newWorkflow()).id}/executions?status=SLEEPING`);
    expect(badStatus.status).toBe(400);
    expect(badStatus.body.error.code).toBe("INVALID_STATUS");
  });

  it("lets one project reach nothing of another's: every id answers 404", async () => {
    const workflow = await newWorkflow();
    const step = await addStep(workflow.id, { type: "EXIT", name: "E" });
    const foreign = other.secretKey;
    expect((await api<ErrorBody>("GET", `/workflows/${workflow.id}`, undefined, foreign)).status).toBe(404);
    expect((await api<ErrorBody>("PATCH", `/workflows/${workflow.id}`, { name: "Mine" }, foreign)).status).toBe(404);
    expect((await api<ErrorBody>("DELETE", `/workflows/${workflow.id}`, undefined, foreign)).status).toBe(404);
    expect((await api<ErrorBody>("POST", `/workflows/${workflow.id}/steps`, { type: "EXIT", name: "X" }, foreign)).status).toBe(404);
    expect((await api<ErrorBody>("PATCH", `/workflows/${workflow.id}/steps/${step.id}`, { name: "X" }, foreign)).status).toBe(404);
    expect((await api<ErrorBody>("DELETE", `/workflows/${workflow.id}/steps/${step.id}`, undefined, foreign)).status).toBe(404);
    expect((await api<ErrorBody>("GET", `/workflows/${workflow.id}/executions`, undefined, foreign)).status).toBe(404);
    expect((await api<ErrorBody>("POST", `/workflows/${workflow.id}/executions`, { email: uniqueEmail() }, foreign)).status).toBe(404);
    expect((await api<Workflow[]>("GET", "/workflows", undefined, foreign)).body.map((item) => item.id)).not.toContain(workflow.id);
    // A step of one workflow is not a step of another of the same project either.
    const second = await newWorkflow();
    expect((await api<ErrorBody>("PATCH", `/workflows/${second.id}/steps/${step.id}`, { name: "X" })).status).toBe(404);
    // A public key reaches no workflow route.
    expect((await api<ErrorBody>("GET", "/workflows", undefined, project.publicKey)).status).toBe(401);
  });

  it("lists the fields CONDITION steps can use, and shows and rotates the webhook secret", async () => {
    await call("POST", "/v1/track", {
      key: project.publicKey,
      body: { email: uniqueEmail("fields"), event: "browsed", data: { plan: "pro" } },
    });
    const fields = await api<{ contactFields: Array<{ field: string }>; eventFields: Array<{ field: string; eventName: string }> }>(
      "GET",
      "/workflows/fields",
    );
    expect(fields.status).toBe(200);
    expect(fields.body.contactFields.map((field) => field.field)).toEqual(expect.arrayContaining(["email", "data.plan"]));
    expect(fields.body.eventFields).toContainEqual({ field: "event.browsed", eventName: "browsed" });
    const secret = await api<{ secret: string }>("GET", "/workflows/webhook-secret");
    expect(secret.body.secret).toMatch(/^whsec_/);
    expect((await api<{ secret: string }>("GET", "/workflows/webhook-secret")).body.secret).toBe(secret.body.secret);
    const rotated = await api<{ secret: string }>("POST", "/workflows/webhook-secret/rotate");
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(secret.body.secret);
    expect((await api<{ secret: string }>("GET", "/workflows/webhook-secret", undefined, other.secretKey)).body.secret).not.toBe(
      rotated.body.secret,
    );
  });
});
