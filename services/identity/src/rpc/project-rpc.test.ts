import { randomUUID } from "node:crypto";
import { toJsonString } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { decodeEnvelope, payloadOf, topics } from "@herald/kafka";
import { ProjectLifecycleSchema } from "@herald/proto/herald/events/v1/project_lifecycle_pb";
import { ListProjectsResponseSchema } from "@herald/proto/herald/identity/v1/project_service_pb";
import { KeyKind, Role } from "@herald/proto/herald/identity/v1/resources_pb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { hashSecretKey } from "../domain/api-keys.js";
import {
  expectFailure,
  type IdentityHarness,
  latestEmail,
  randomEmail,
  signUp,
  signUpVerified,
  startIdentity,
  tokenFromEmail,
} from "../test-support/identity-harness.js";

describe("projects, keys and members", () => {
  let identity: IdentityHarness;

  beforeAll(async () => {
    identity = await startIdentity(inject("herald"));
  });

  afterAll(() => identity?.stop());

  async function projectOf(userId: string, name = "Acme") {
    const { project, keys } = await identity.projects.createProject({ userId, name });
    if (!project || !keys) throw new Error("no project");
    return { project, keys, projectId: project.id };
  }

  it("creates a project with its creator as owner and keys shown once", async () => {
    const { user } = await signUp(identity);
    const { project, keys } = await projectOf(user.id, "  Acme Mail  ");
    expect(project).toMatchObject({ name: "Acme Mail", role: Role.OWNER, disabled: false, publicKey: keys.publicKey });
    expect(keys.secretKey).toMatch(/^sk_[0-9A-Za-z]{43}$/);
    expect(project.secretKeyHint).toBe(`${keys.secretKey.slice(0, 8)}…`);

    const stored = await identity.db.project.findUniqueOrThrow({ where: { id: project.id } });
    expect(JSON.stringify(stored)).not.toContain(keys.secretKey);
    expect(stored.secretKeyHash).toBe(hashSecretKey(keys.secretKey));

    const listed = await identity.projects.listProjects({ userId: user.id });
    expect(listed.projects.map((p) => [p.id, p.role])).toEqual([[project.id, Role.OWNER]]);
    expect(toJsonString(ListProjectsResponseSchema, listed)).not.toContain(keys.secretKey);

    await expectFailure(identity.projects.createProject({ userId: user.id, name: "   " }), Code.InvalidArgument, "VALIDATION_ERROR");
    await expectFailure(
      identity.projects.createProject({ userId: user.id, name: "x".repeat(101) }),
      Code.InvalidArgument,
      "VALIDATION_ERROR",
    );
  });

  it("resolves both keys, records the first use, and refuses unknown ones", async () => {
    const { user } = await signUp(identity);
    const { projectId, keys } = await projectOf(user.id);
    expect((await identity.projects.getSetupState({ userId: user.id, projectId })).apiKeyUsed).toBe(false);
    expect(await identity.projects.resolveApiKey({ key: keys.secretKey })).toMatchObject({
      projectId,
      kind: KeyKind.SECRET,
      disabled: false,
    });
    expect(await identity.projects.resolveApiKey({ key: keys.publicKey })).toMatchObject({ projectId, kind: KeyKind.PUBLIC });
    expect(await identity.projects.getSetupState({ userId: user.id, projectId })).toMatchObject({
      projectCreated: true,
      apiKeyUsed: true,
      memberInvited: false,
      emailSent: false,
    });
    // Without a user, as the gateway asks when the project's secret key authenticated the request.
    expect(await identity.projects.getSetupState({ userId: "", projectId })).toMatchObject({ projectCreated: true, apiKeyUsed: true });
    expect((await identity.projects.getSecurityState({ userId: "", projectId })).disabled).toBe(false);
    await expectFailure(identity.projects.getSetupState({ userId: "", projectId: randomUUID() }), Code.NotFound, "PROJECT_NOT_FOUND");
    // Every other project RPC needs a user.
    await expectFailure(identity.projects.listMembers({ userId: "", projectId }), Code.NotFound, "PROJECT_NOT_FOUND");
    await expectFailure(identity.projects.regenerateKeys({ userId: "", projectId }), Code.NotFound, "PROJECT_NOT_FOUND");
    for (const key of [`${keys.secretKey}x`, "sk_unknown", "pk_unknown", "Bearer", ""]) {
      const error = await expectFailure(identity.projects.resolveApiKey({ key }), Code.Unauthenticated, "INVALID_API_KEY");
      expect(error.rawMessage).toBe("Invalid API key");
    }
  });

  it("rotates both keys at once: the old ones stop resolving immediately", async () => {
    const { user } = await signUp(identity);
    const { projectId, keys } = await projectOf(user.id);
    const rotated = await identity.projects.regenerateKeys({ userId: user.id, projectId });
    expect(rotated.keys?.secretKey).not.toBe(keys.secretKey);
    expect(rotated.keys?.publicKey).not.toBe(keys.publicKey);
    expect(rotated.project?.keysRotatedAt).toBeDefined();
    await expectFailure(identity.projects.resolveApiKey({ key: keys.secretKey }), Code.Unauthenticated, "INVALID_API_KEY");
    await expectFailure(identity.projects.resolveApiKey({ key: keys.publicKey }), Code.Unauthenticated, "INVALID_API_KEY");
    expect((await identity.projects.resolveApiKey({ key: rotated.keys?.secretKey ?? "" })).projectId).toBe(projectId);
    expect((await identity.projects.resolveApiKey({ key: rotated.keys?.publicKey ?? "" })).projectId).toBe(projectId);
  });

  it("writes every lifecycle change to the outbox, keyed by project, in the same transaction", async () => {
    const { user } = await signUp(identity);
    const { projectId, keys } = await projectOf(user.id);
    await identity.projects.updateProject({ userId: user.id, projectId, name: "Renamed" });
    await identity.projects.updateProject({ userId: user.id, projectId, name: "Renamed" });
    await identity.projects.updateProject({ userId: user.id, projectId, disabled: true });
    expect(await identity.projects.resolveApiKey({ key: keys.secretKey })).toMatchObject({ disabled: true });
    await identity.projects.updateProject({ userId: user.id, projectId, disabled: false });
    await identity.projects.regenerateKeys({ userId: user.id, projectId });
    await identity.projects.resetProject({ userId: user.id, projectId });
    await identity.projects.deleteProject({ userId: user.id, projectId });

    const rows = await identity.db.outboxEvent.findMany({ where: { key: projectId }, orderBy: { id: "asc" } });
    const events = rows.map((row) => ({ row, envelope: decodeEnvelope(row.payload) }));
    expect(events.map(({ envelope }) => envelope.type)).toEqual([
      "project.created",
      "project.updated",
      "project.disabled",
      "project.enabled",
      "project.keys_rotated",
      "project.reset",
      "project.deleted",
    ]);
    for (const { row, envelope } of events) {
      expect(row.topic).toBe(topics.projectLifecycle);
      expect(envelope).toMatchObject({ projectId, source: "identity" });
      expect(payloadOf(envelope, ProjectLifecycleSchema)).toMatchObject({ projectId, actorUserId: user.id });
    }
    await expectFailure(identity.projects.resolveApiKey({ key: keys.publicKey }), Code.Unauthenticated, "INVALID_API_KEY");
    await expectFailure(identity.projects.getSetupState({ userId: user.id, projectId }), Code.NotFound, "PROJECT_NOT_FOUND");
  });

  it("records a suspension when an owner disables the project and lifts it on enable", async () => {
    const { user } = await signUp(identity);
    const { projectId } = await projectOf(user.id);
    await identity.projects.updateProject({ userId: user.id, projectId, disabled: true });
    const disabled = await identity.projects.getSecurityState({ userId: user.id, projectId });
    expect(disabled).toMatchObject({ disabled: true, sent: 0n, bounceRate: 0, complaintRate: 0 });
    expect(disabled.suspensions).toHaveLength(1);
    expect(disabled.suspensions[0]).toMatchObject({ reason: "disabled by owner" });
    expect(disabled.suspensions[0]?.liftedAt).toBeUndefined();
    await identity.projects.updateProject({ userId: user.id, projectId, disabled: false });
    const enabled = await identity.projects.getSecurityState({ userId: user.id, projectId });
    expect(enabled.disabled).toBe(false);
    expect(enabled.suspensions[0]?.liftedAt).toBeDefined();
  });

  it("shows nothing of one user's project to another: PROJECT_NOT_FOUND everywhere", async () => {
    const owner = await signUp(identity);
    const stranger = await signUp(identity);
    const { projectId } = await projectOf(owner.user.id);
    const userId = stranger.user.id;
    const calls = (id: string): Array<() => Promise<unknown>> => [
      () => identity.projects.updateProject({ userId, projectId: id, name: "Mine now" }),
      () => identity.projects.deleteProject({ userId, projectId: id }),
      () => identity.projects.regenerateKeys({ userId, projectId: id }),
      () => identity.projects.resetProject({ userId, projectId: id }),
      () => identity.projects.getSetupState({ userId, projectId: id }),
      () => identity.projects.getSecurityState({ userId, projectId: id }),
      () => identity.projects.listMembers({ userId, projectId: id }),
      () => identity.projects.addMember({ userId, projectId: id, email: stranger.email, role: Role.OWNER }),
      () => identity.projects.updateMember({ userId, projectId: id, memberUserId: userId, role: Role.OWNER }),
      () => identity.projects.removeMember({ userId, projectId: id, memberUserId: owner.user.id }),
      () => identity.billing.getBillingLimits({ userId, projectId: id }),
      () => identity.billing.setBillingLimits({ userId, projectId: id, limits: {} }),
      () => identity.billing.getBillingConsumption({ userId, projectId: id }),
      () => identity.billing.createCheckoutSession({ userId, projectId: id, priceId: "price_1" }),
    ];
    for (const id of [projectId, randomUUID(), "not-a-uuid"]) {
      for (const call of calls(id)) await expectFailure(call(), Code.NotFound, "PROJECT_NOT_FOUND");
    }
    expect((await identity.projects.listProjects({ userId })).projects).toEqual([]);
    expect((await identity.projects.listMembers({ userId: owner.user.id, projectId })).members.map((m) => m.email)).toEqual([owner.email]);
  });

  it("lets owners and admins manage members, and members only read", async () => {
    const owner = await signUpVerified(identity);
    const admin = await signUpVerified(identity);
    const member = await signUpVerified(identity);
    const { projectId } = await projectOf(owner.user.id);

    const added = await identity.projects.addMember({
      userId: owner.user.id,
      projectId,
      email: admin.email.toUpperCase(),
      role: Role.ADMIN,
    });
    expect(added.member).toMatchObject({ userId: admin.user.id, email: admin.email, role: Role.ADMIN, active: true });
    await identity.projects.addMember({ userId: admin.user.id, projectId, email: member.email, role: Role.UNSPECIFIED });
    const listed = await identity.projects.listMembers({ userId: member.user.id, projectId });
    expect(listed.members.map((m) => [m.email, m.role, m.active])).toEqual([
      [owner.email, Role.OWNER, true],
      [admin.email, Role.ADMIN, true],
      [member.email, Role.MEMBER, true],
    ]);
    expect((await identity.projects.getSetupState({ userId: member.user.id, projectId })).memberInvited).toBe(true);

    await expectFailure(
      identity.projects.addMember({ userId: member.user.id, projectId, email: randomEmail(), role: Role.MEMBER }),
      Code.PermissionDenied,
      "INSUFFICIENT_ROLE",
    );
    await expectFailure(
      identity.projects.addMember({ userId: owner.user.id, projectId, email: member.email, role: Role.MEMBER }),
      Code.AlreadyExists,
      "MEMBER_EXISTS",
    );
    await expectFailure(
      identity.projects.addMember({ userId: admin.user.id, projectId, email: randomEmail(), role: Role.OWNER }),
      Code.PermissionDenied,
      "INSUFFICIENT_ROLE",
    );
    await expectFailure(
      identity.projects.updateMember({ userId: admin.user.id, projectId, memberUserId: member.user.id, role: Role.OWNER }),
      Code.PermissionDenied,
      "INSUFFICIENT_ROLE",
    );
    await expectFailure(
      identity.projects.updateMember({ userId: admin.user.id, projectId, memberUserId: owner.user.id, role: Role.MEMBER }),
      Code.PermissionDenied,
      "INSUFFICIENT_ROLE",
    );
    await expectFailure(
      identity.projects.updateMember({ userId: owner.user.id, projectId, memberUserId: member.user.id, role: Role.UNSPECIFIED }),
      Code.InvalidArgument,
      "VALIDATION_ERROR",
    );
    await expectFailure(
      identity.projects.updateMember({ userId: owner.user.id, projectId, memberUserId: randomUUID(), role: Role.ADMIN }),
      Code.NotFound,
      "MEMBER_NOT_FOUND",
    );
    await expectFailure(
      identity.projects.updateProject({ userId: admin.user.id, projectId, disabled: true }),
      Code.PermissionDenied,
      "INSUFFICIENT_ROLE",
    );
    await expectFailure(
      identity.projects.updateProject({ userId: member.user.id, projectId, name: "x" }),
      Code.PermissionDenied,
      "INSUFFICIENT_ROLE",
    );
    await expectFailure(
      identity.projects.regenerateKeys({ userId: member.user.id, projectId }),
      Code.PermissionDenied,
      "INSUFFICIENT_ROLE",
    );
    await expectFailure(identity.projects.deleteProject({ userId: admin.user.id, projectId }), Code.PermissionDenied, "INSUFFICIENT_ROLE");
    await expectFailure(identity.projects.resetProject({ userId: admin.user.id, projectId }), Code.PermissionDenied, "INSUFFICIENT_ROLE");
    await expectFailure(
      identity.projects.removeMember({ userId: member.user.id, projectId, memberUserId: admin.user.id }),
      Code.PermissionDenied,
      "INSUFFICIENT_ROLE",
    );

    expect((await identity.projects.updateProject({ userId: admin.user.id, projectId, name: "Renamed by admin" })).project?.name).toBe(
      "Renamed by admin",
    );
    const promoted = await identity.projects.updateMember({
      userId: admin.user.id,
      projectId,
      memberUserId: member.user.id,
      role: Role.ADMIN,
    });
    expect(promoted.member?.role).toBe(Role.ADMIN);
    await identity.projects.removeMember({ userId: member.user.id, projectId, memberUserId: member.user.id });
    await expectFailure(identity.projects.listMembers({ userId: member.user.id, projectId }), Code.NotFound, "PROJECT_NOT_FOUND");
  });

  it("keeps the last owner: not demoted, not removed, not even by themself", async () => {
    const owner = await signUpVerified(identity);
    const second = await signUpVerified(identity);
    const { projectId } = await projectOf(owner.user.id);
    const self = owner.user.id;
    await expectFailure(
      identity.projects.updateMember({ userId: self, projectId, memberUserId: self, role: Role.ADMIN }),
      Code.AlreadyExists,
      "LAST_OWNER",
    );
    await expectFailure(identity.projects.removeMember({ userId: self, projectId, memberUserId: self }), Code.AlreadyExists, "LAST_OWNER");

    await identity.projects.addMember({ userId: self, projectId, email: second.email, role: Role.OWNER });
    // Two owners demoting each other at once: one wins, one finds itself the last owner.
    const outcomes = await Promise.allSettled([
      identity.projects.updateMember({ userId: self, projectId, memberUserId: second.user.id, role: Role.MEMBER }),
      identity.projects.updateMember({ userId: second.user.id, projectId, memberUserId: self, role: Role.MEMBER }),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(1);
    const owners = (await identity.projects.listMembers({ userId: self, projectId })).members.filter((m) => m.role === Role.OWNER);
    expect(owners).toHaveLength(1);
  });

  it("invites an unknown address, which joins once it signs up and proves the address", async () => {
    const owner = await signUpVerified(identity);
    const { projectId } = await projectOf(owner.user.id, "Invite Co");
    const invitee = randomEmail("invitee");
    const invited = await identity.projects.addMember({ userId: owner.user.id, projectId, email: invitee, role: Role.ADMIN });
    expect(invited.member).toMatchObject({ email: invitee, role: Role.ADMIN, active: false });
    const email = await latestEmail(identity.db, invitee, "invitation");
    // The project's name is the inviter's free text: never in the subject, only on a labelled line of the body.
    expect(email?.subject).not.toContain("Invite Co");
    expect(email?.text).toContain("Invite Co");
    expect(email?.text).toContain(owner.email);
    expect(email?.text).toContain("http://herald.test/auth/signup?email=");
    await expectFailure(
      identity.projects.addMember({ userId: owner.user.id, projectId, email: invitee.toUpperCase(), role: Role.MEMBER }),
      Code.AlreadyExists,
      "MEMBER_EXISTS",
    );

    const account = await signUp(identity, invitee);
    // Signing up is not enough: whoever registers an address first must not inherit its invitations.
    await expectFailure(identity.projects.listMembers({ userId: account.user.id, projectId }), Code.NotFound, "PROJECT_NOT_FOUND");
    await identity.accounts.verifyEmail({ token: await tokenFromEmail(identity.db, invitee, "verify_email") });
    const members = await identity.projects.listMembers({ userId: account.user.id, projectId });
    expect(members.members.filter((m) => m.email === invitee)).toEqual([
      expect.objectContaining({ userId: account.user.id, role: Role.ADMIN, active: true }),
    ]);
    expect((await identity.projects.listProjects({ userId: account.user.id })).projects.map((p) => [p.id, p.role])).toEqual([
      [projectId, Role.ADMIN],
    ]);
  });

  it("changes or withdraws a pending invitation by its id", async () => {
    const owner = await signUpVerified(identity);
    const { projectId } = await projectOf(owner.user.id);
    const invited = await identity.projects.addMember({ userId: owner.user.id, projectId, email: randomEmail(), role: Role.MEMBER });
    const invitationId = invited.member?.userId ?? "";
    const changed = await identity.projects.updateMember({
      userId: owner.user.id,
      projectId,
      memberUserId: invitationId,
      role: Role.ADMIN,
    });
    expect(changed.member).toMatchObject({ userId: invitationId, role: Role.ADMIN, active: false });
    await identity.projects.removeMember({ userId: owner.user.id, projectId, memberUserId: invitationId });
    expect((await identity.projects.listMembers({ userId: owner.user.id, projectId })).members).toHaveLength(1);
    await expectFailure(
      identity.projects.removeMember({ userId: owner.user.id, projectId, memberUserId: invitationId }),
      Code.NotFound,
      "MEMBER_NOT_FOUND",
    );
  });
});
