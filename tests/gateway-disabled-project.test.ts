import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestGateway } from "./support/gateway.js";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp } from "./support/http.js";

const herald = inject("herald");
const call = restClient(herald.stack.gatewayUrl);

describe("a disabled project's sessions", () => {
  let owner: SignedInUser;
  let project: CreatedProject;

  beforeAll(async () => {
    owner = await signUp(call, "disabled-sessions");
    project = await createProject(call, owner.cookie, "Disabled sessions");
  });

  const contactsWithSession = () => call("GET", "/contacts", { cookie: owner.cookie, headers: { "x-project-id": project.id } });
  const setDisabled = (disabled: boolean) =>
    call("PATCH", `/users/@me/projects/${project.id}`, { cookie: owner.cookie, body: { disabled } });

  it("are refused on the project's routes with the 403 PROJECT_DISABLED its keys get, and let the owner enable it again", async () => {
    // The session is verified and cached before the project is disabled: disabling must still bite at once.
    expect((await contactsWithSession()).status).toBe(200);
    expect((await setDisabled(true)).status).toBe(200);

    const bySession = await contactsWithSession();
    expect(bySession.status).toBe(403);
    expect(bySession.body).toMatchObject({ success: false, error: { code: "PROJECT_DISABLED", statusCode: 403 } });
    const byKey = await call("GET", "/contacts", { key: project.secretKey });
    expect(byKey.status).toBe(403);
    expect(byKey.body).toMatchObject({ error: { code: "PROJECT_DISABLED" } });
    // A write is refused the same way.
    const write = await call("POST", "/contacts", {
      cookie: owner.cookie,
      headers: { "x-project-id": project.id },
      body: { email: "someone@example.com" },
    });
    expect(write.status).toBe(403);
    expect(write.body).toMatchObject({ error: { code: "PROJECT_DISABLED" } });

    // The account routes stay open, so that the owner can see it and enable it again.
    const listed = await call<{ id: string; disabled: boolean }[]>("GET", "/users/@me/projects", { cookie: owner.cookie });
    expect(listed.body.find((each) => each.id === project.id)?.disabled).toBe(true);
    expect((await setDisabled(false)).status).toBe(200);
    expect((await contactsWithSession()).status).toBe(200);
  });

  describe("on another gateway replica", () => {
    let replica: Awaited<ReturnType<typeof createTestGateway>>;

    beforeAll(async () => {
      // Sessions cached for five minutes: only the lifecycle event can make this replica refuse in time.
      replica = await createTestGateway({
        serviceUrls: herald.stack.serviceUrls,
        redisUrl: herald.redisUrl,
        kafkaBrokers: herald.kafkaBrokers,
        env: { SESSION_CACHE_TTL_MS: "300000" },
      });
    });

    afterAll(async () => {
      await setDisabled(false);
      await replica?.close();
    });

    const contactsOnReplica = () =>
      replica.app.inject({ method: "GET", url: "/contacts", headers: { cookie: owner.cookie, "x-project-id": project.id } });

    it("are refused once the project is disabled through another replica, by its lifecycle event", async () => {
      expect((await contactsOnReplica()).statusCode).toBe(200);
      expect((await setDisabled(true)).status).toBe(200);

      let answer = await contactsOnReplica();
      for (let tries = 0; answer.statusCode === 200 && tries < 120; tries++) {
        await sleep(250);
        answer = await contactsOnReplica();
      }
      expect(answer.statusCode).toBe(403);
      expect(answer.json().error).toMatchObject({ code: "PROJECT_DISABLED", statusCode: 403 });
    });
  });
});
