import { beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp, uniqueEmail, verifyAddress } from "./support/http.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

type Member = { userId: string; email: string; role: string; active: boolean };
type ErrorBody = { error: { code: string } };

describe("members and roles", () => {
  let owner: SignedInUser;
  let member: SignedInUser;
  let admin: SignedInUser;
  let project: CreatedProject;

  beforeAll(async () => {
    owner = await signUp(call, "owner");
    member = await signUp(call, "member");
    admin = await signUp(call, "admin");
    await Promise.all([verifyAddress(call, owner), verifyAddress(call, member), verifyAddress(call, admin)]);
    project = await createProject(call, owner.cookie, "Team");
  });

  it("lets the owner add members with roles, and every member list them", async () => {
    const added = await call<Member>("POST", `/projects/${project.id}/members`, { cookie: owner.cookie, body: { email: member.email } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ userId: member.id, email: member.email, role: "MEMBER", active: true });
    const promoted = await call<Member>("POST", `/projects/${project.id}/members`, {
      cookie: owner.cookie,
      body: { email: admin.email, role: "ADMIN" },
    });
    expect(promoted.body.role).toBe("ADMIN");

    const listed = await call<Member[]>("GET", `/projects/${project.id}/members`, { cookie: member.cookie });
    expect(listed.status).toBe(200);
    expect(listed.body.map((entry) => [entry.email, entry.role])).toEqual(
      expect.arrayContaining([
        [owner.email, "OWNER"],
        [member.email, "MEMBER"],
        [admin.email, "ADMIN"],
      ]),
    );
    // A member sees the project in their own list.
    const theirs = await call<Array<{ id: string; role: string }>>("GET", "/users/@me/projects", { cookie: member.cookie });
    expect(theirs.body).toEqual([expect.objectContaining({ id: project.id, role: "MEMBER" })]);
  });

  it("refuses a MEMBER who tries to invite, with 403", async () => {
    const answer = await call<ErrorBody>("POST", `/projects/${project.id}/members`, {
      cookie: member.cookie,
      body: { email: uniqueEmail("friend") },
    });
    expect(answer.status).toBe(403);
    expect(answer.body.error.code).toBe("INSUFFICIENT_ROLE");
    expect((await call("POST", `/users/@me/projects/${project.id}/regenerate-keys`, { cookie: member.cookie })).status).toBe(403);
  });

  it("makes an unverified account wait until it proves its address", async () => {
    const unproven = await signUp(call, "unproven");
    const invited = await call<Member>("POST", `/projects/${project.id}/members`, {
      cookie: owner.cookie,
      body: { email: unproven.email },
    });
    expect(invited.status).toBe(201);
    expect(invited.body.active).toBe(false);
    expect((await call("GET", `/projects/${project.id}/members`, { cookie: unproven.cookie })).status).toBe(404);
    await verifyAddress(call, unproven);
    expect((await call("GET", `/projects/${project.id}/members`, { cookie: unproven.cookie })).status).toBe(200);
  });

  it("invites an address without an account, which joins once it proves the address", async () => {
    const invited = await call<Member>("POST", `/projects/${project.id}/members`, {
      cookie: admin.cookie,
      body: { email: uniqueEmail("newcomer") },
    });
    expect(invited.status).toBe(201);
    expect(invited.body.active).toBe(false);
    const duplicate = await call<ErrorBody>("POST", `/projects/${project.id}/members`, {
      cookie: owner.cookie,
      body: { email: member.email },
    });
    expect(duplicate.status).toBe(409);
  });

  it("never removes or demotes the last owner", async () => {
    const removed = await call<ErrorBody>("DELETE", `/projects/${project.id}/members/${owner.id}`, { cookie: owner.cookie });
    expect(removed.status).toBeGreaterThanOrEqual(400);
    expect(removed.status).toBeLessThan(500);
    expect(removed.body.error.code).toBe("LAST_OWNER");
    const demoted = await call<ErrorBody>("PATCH", `/projects/${project.id}/members/${owner.id}`, {
      cookie: owner.cookie,
      body: { role: "MEMBER" },
    });
    expect(demoted.body.error.code).toBe("LAST_OWNER");
  });

  it("lets an admin change a member's role and remove them", async () => {
    const changed = await call<Member>("PATCH", `/projects/${project.id}/members/${member.id}`, {
      cookie: admin.cookie,
      body: { role: "ADMIN" },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.role).toBe("ADMIN");
    expect((await call("DELETE", `/projects/${project.id}/members/${member.id}`, { cookie: admin.cookie })).status).toBe(204);
    expect((await call("GET", `/projects/${project.id}/members`, { cookie: member.cookie })).status).toBe(404);
  });

  it("answers an unknown role with 422", async () => {
    const answer = await call<ErrorBody>("POST", `/projects/${project.id}/members`, {
      cookie: owner.cookie,
      body: { email: uniqueEmail("x"), role: "KING" },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.error.code).toBe("VALIDATION_ERROR");
  });
});
