import { waitUntil } from "@herald/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp } from "./support/http.js";

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
});
