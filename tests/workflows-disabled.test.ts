import { waitUntil } from "@herald/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp, uniqueEmail } from "./support/http.js";
import { type ExecutionJson, finished, workflowBuilder } from "./support/workflows.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

/**
 * Automation keeps the list of projects whose workflows must not run (stopped_projects), from identity's
 * project.disabled, project.enabled and project.deleted: the engine's claims, timers and triggers filter by it.
 */
describe("automation's list of stopped projects", () => {
  let owner: SignedInUser;
  let pool: pg.Pool;

  beforeAll(async () => {
    owner = await signUp(call, "workflows-disabled");
    pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 1 });
  });

  afterAll(async () => {
    await pool?.end();
  });

  const reasonOf = async (project: CreatedProject) =>
    (await pool.query<{ reason: string }>("SELECT reason FROM automation.stopped_projects WHERE project_id = $1::uuid", [project.id]))
      .rows[0]?.reason;
  const setDisabled = async (project: CreatedProject, disabled: boolean) =>
    expect((await call("PATCH", `/users/@me/projects/${project.id}`, { cookie: owner.cookie, body: { disabled } })).status).toBe(200);

  it("adds a project when it is disabled, removes it when it is enabled, and keeps a deleted one for good", async () => {
    const project = await createProject(call, owner.cookie, "Stopped workflows");
    const other = await createProject(call, owner.cookie, "Running workflows");
    await setDisabled(project, true);
    await waitUntil(async () => (await reasonOf(project)) === "project.disabled", { timeoutMs: 60_000 });
    expect(await reasonOf(other)).toBeUndefined();

    await setDisabled(project, false);
    await waitUntil(async () => (await reasonOf(project)) === undefined, { timeoutMs: 60_000 });

    expect((await call("DELETE", `/users/@me/projects/${project.id}`, { cookie: owner.cookie })).status).toBe(204);
    await waitUntil(async () => (await reasonOf(project)) === "project.deleted", { timeoutMs: 60_000 });
    expect(await reasonOf(other)).toBeUndefined();
  }, 180_000);

  it("holds a disabled project's timers and steps where they are, and goes on from there once it is enabled", async () => {
    const project = await createProject(call, owner.cookie, "Held workflows");
    const flows = workflowBuilder(call, project.secretKey);
    const workflow = await flows.create({
      eventName: "held_delay",
      steps: [
        // DELAY_TIME_SCALE=0.01 in the stack: ten minutes are due 6 s after the step is reached.
        { ref: "wait", type: "DELAY", config: { amount: 10, unit: "minutes" } },
        { ref: "update", type: "UPDATE_CONTACT", config: { data: { resumed: true } } },
      ],
    });
    const email = uniqueEmail("held");
    expect((await call("POST", "/v1/track", { key: project.publicKey, body: { email, event: "seen" } })).status).toBe(200);
    const started = await call<ExecutionJson>("POST", `/workflows/${workflow.id}/executions`, { key: project.secretKey, body: { email } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const waiting = await flows.executionWhen(workflow.id, started.body.id, (execution) => execution.steps[0]?.status === "WAITING");
    const dueAt = Date.parse(waiting.steps[0]?.dueAt ?? "");
    await setDisabled(project, true);
    await waitUntil(async () => (await reasonOf(project)) === "project.disabled", { timeoutMs: 60_000 });

    // While disabled, neither its keys nor its sessions reach it: the engine's rows are read here directly.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, dueAt - Date.now()) + 3_000));
    const runs = await pool.query<{ step_type: string; status: string }>(
      "SELECT step_type, status FROM automation.workflow_step_runs WHERE execution_id = $1::uuid ORDER BY created_at",
      [started.body.id],
    );
    expect(runs.rows).toEqual([{ step_type: "DELAY", status: "WAITING" }]);

    await setDisabled(project, false);
    const done = await flows.executionWhen(workflow.id, started.body.id, finished);
    expect(done.status).toBe("COMPLETED");
    expect(done.steps.map((step) => step.status)).toEqual(["COMPLETED", "COMPLETED"]);
  }, 180_000);
});
