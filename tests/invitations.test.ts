import { beforeAll, describe, expect, inject, it } from "vitest";
import { accountEmail } from "./support/auth-emails.js";
import { createProject, restClient, type SignedInUser, signUp, uniqueEmail, verifyAddress } from "./support/http.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

type ErrorBody = { error: { code: string; details?: Record<string, string> } };

/** What a member cannot make Herald mail to others (docs/security.md "Invitations"). */
describe("invitations cannot be abused", () => {
  let owner: SignedInUser;

  beforeAll(async () => {
    owner = await signUp(call, "inviter");
    await verifyAddress(call, owner);
  });

  const invite = (cookie: string, projectId: string, email: string) =>
    call<ErrorBody>("POST", `/projects/${projectId}/members`, { cookie, body: { email } });

  it("refuses an inviter whose own address is not verified, 403 EMAIL_NOT_VERIFIED, and mails nothing", async () => {
    const unproven = await signUp(call, "unproven-inviter");
    const project = await createProject(call, unproven.cookie, "Unproven");
    const invitee = uniqueEmail("never-mailed");
    const answer = await invite(unproven.cookie, project.id, invitee);
    expect(answer.status).toBe(403);
    expect(answer.body.error.code).toBe("EMAIL_NOT_VERIFIED");
    const members = await call<Array<{ email: string }>>("GET", `/projects/${project.id}/members`, { cookie: unproven.cookie });
    expect(members.body.map((member) => member.email)).toEqual([unproven.email]);
    // Once proven, the same account may invite.
    await verifyAddress(call, unproven);
    expect((await invite(unproven.cookie, project.id, invitee)).status).toBe(201);
  });

  it("limits the invitations one address receives a day, from all projects together: 429 INVITATION_LIMIT_EXCEEDED", async () => {
    const target = uniqueEmail("much-invited");
    // INVITATIONS_PER_ADDRESS_PER_DAY is 5 by default.
    for (let i = 0; i < 5; i++) {
      const project = await createProject(call, owner.cookie, `Address limit ${i}`);
      expect((await invite(owner.cookie, project.id, target)).status).toBe(201);
    }
    const sixth = await createProject(call, owner.cookie, "Address limit 5");
    const refused = await invite(owner.cookie, sixth.id, target);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("INVITATION_LIMIT_EXCEEDED");
    expect(refused.body.error.details?.limit).toBe("address");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another address from that project is still fine.
    expect((await invite(owner.cookie, sixth.id, uniqueEmail("other"))).status).toBe(201);
  });

  it("limits the invitations one project sends a day: 429 INVITATION_LIMIT_EXCEEDED past INVITATIONS_PER_PROJECT_PER_DAY", async () => {
    const project = await createProject(call, owner.cookie, "Project limit");
    // INVITATIONS_PER_PROJECT_PER_DAY is 50 by default.
    for (let i = 0; i < 50; i++) expect((await invite(owner.cookie, project.id, uniqueEmail(`bulk-${i}`))).status).toBe(201);
    const refused = await invite(owner.cookie, project.id, uniqueEmail("one-too-many"));
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("INVITATION_LIMIT_EXCEEDED");
    expect(refused.body.error.details?.limit).toBe("project");
    // Another project of the same owner is not held back.
    const other = await createProject(call, owner.cookie, "Project limit, other");
    expect((await invite(owner.cookie, other.id, uniqueEmail("elsewhere"))).status).toBe(201);
  }, 120_000);

  it("keeps the project's name out of the subject, and quotes it in the body only labelled as the inviter's words", async () => {
    const project = await createProject(call, owner.cookie, "Verify payroll at evil.example \u202Enow");
    const invitee = uniqueEmail("phished");
    expect((await invite(owner.cookie, project.id, invitee)).status).toBe(201);
    const email = await accountEmail(invitee, "invitation");
    expect(email.subject).toBe("You are invited to a project on Herald");
    expect(email.subject).not.toContain("payroll");
    const lines = email.text.trimEnd().split("\n");
    const named = lines.findIndex((line) => line.includes("payroll"));
    // The name's only line is the last, in quotes, right under the line that says who wrote it.
    expect(lines.filter((line) => line.includes("payroll"))).toEqual(['"Verify payroll at evil.example now"']);
    expect(named).toBe(lines.length - 1);
    expect(lines[named - 1]).toBe("Project name, as written by the person who invited you (not by Herald):");
    // The name is the last thing in the email, after Herald's own words and the link.
    expect(email.text.indexOf("payroll")).toBeGreaterThan(email.text.indexOf("/auth/signup?email="));
    expect(email.text).not.toContain("\u202E");
  });
});
