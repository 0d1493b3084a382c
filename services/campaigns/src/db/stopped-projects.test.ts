import { randomUUID } from "node:crypto";
import { topics } from "@herald/kafka";
import { CampaignEventSchema } from "@herald/proto/herald/events/v1/campaign_event_pb";
import { createTestDatabase, publishedEvents, type TestDatabase } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { markSent } from "./campaigns.js";
import { createDb, type Db } from "./client.js";
import { resumeProject, stopProject } from "./stopped-projects.js";

/** campaign.paused and campaign.sent, as the outbox holds them (nothing relays them here). */
describe("campaign events in the outbox", () => {
  let database: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    db = createDb(database.databaseUrl, "campaigns");
  });

  afterAll(async () => {
    await db?.$disconnect();
    await database?.drop();
  });

  const eventsOf = async (projectId: string) =>
    publishedEvents(
      await db.outboxEvent.findMany({ where: { topic: topics.campaignEvents }, orderBy: { id: "asc" } }),
      projectId,
      CampaignEventSchema,
    ).map((event) => ({ type: event.envelope.type, key: event.key, contactId: event.envelope.contactId, ...event.payload }));

  const campaignIn = async (projectId: string, status: string, name = `${status} campaign`) =>
    (
      await db.campaign.create({
        data: {
          projectId,
          name,
          subject: `${name} subject`,
          body: "<p>Hi</p>",
          fromAddress: "news@example.com",
          audienceType: "ALL",
          status,
          totalRecipients: 40,
        },
      })
    ).id;

  it("a stop pauses the project's SENDING campaigns once each, with the reason; another stop while stopped, or a deletion, pauses none", async () => {
    const projectId = randomUUID();
    const sending = await campaignIn(projectId, "SENDING");
    await campaignIn(projectId, "SCHEDULED");
    const stop = (reason: Parameters<typeof stopProject>[2], detail = "") =>
      db.$transaction((tx) => stopProject(tx, projectId, reason, new Date(), detail));

    await stop("project.suspended", "Complaint rate above 0.3 %");
    await stop("project.suspended", "Complaint rate above 0.3 %");
    await stop("project.disabled");
    expect(await eventsOf(projectId)).toEqual([
      expect.objectContaining({
        type: "campaign.paused",
        key: projectId,
        contactId: "",
        campaignId: sending,
        name: "SENDING campaign",
        subject: "SENDING campaign subject",
        recipients: 40n,
        reason: "The project's sending is suspended: Complaint rate above 0.3 %",
      }),
    ]);

    await db.$transaction((tx) => resumeProject(tx, projectId));
    await stop("project.disabled");
    expect((await eventsOf(projectId)).map((event) => event.reason)).toEqual([
      "The project's sending is suspended: Complaint rate above 0.3 %",
      "The project is disabled",
    ]);

    await db.$transaction((tx) => resumeProject(tx, projectId));
    await stop("project.deleted");
    expect(await eventsOf(projectId)).toHaveLength(2);
  });

  it("a campaign marked SENT gets one campaign.sent; one no longer SENDING gets none", async () => {
    const projectId = randomUUID();
    const sending = await campaignIn(projectId, "SENDING", "Spring");
    const cancelled = await campaignIn(projectId, "CANCELLED");
    await markSent(db, sending);
    await markSent(db, sending);
    await markSent(db, cancelled);
    expect(await eventsOf(projectId)).toEqual([
      expect.objectContaining({ type: "campaign.sent", key: projectId, campaignId: sending, name: "Spring", recipients: 40n, reason: "" }),
    ]);
    expect((await db.campaign.findUniqueOrThrow({ where: { id: cancelled } })).status).toBe("CANCELLED");
  });
});
