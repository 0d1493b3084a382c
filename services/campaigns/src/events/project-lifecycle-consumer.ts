import type { Client } from "@connectrpc/connect";
import { createProjectWipeConsumer, type EventConsumer } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import type { CampaignSendsService } from "@herald/proto/herald/delivery/v1/campaign_sends_service_pb";
import type { Kafka } from "kafkajs";
import { deleteProjectCampaigns } from "../db/campaigns.js";
import type { Db } from "../db/client.js";
import { isId } from "../domain/ids.js";

export const projectLifecycleGroupId = "campaigns.project-lifecycle";

/**
 * Forgets a project's campaigns when it is reset (those that existed at the reset; later ones
 * stay) or deleted: a campaign is the record of a send to the project's contacts, which the
 * reset wipes with them. Emails a wiped campaign still has queued in delivery are withdrawn
 * (they would go to contacts that no longer exist), inside the wipe's transaction, so that a
 * failed withdrawal rolls the wipe back and the event is applied again.
 */
export function createProjectLifecycleConsumer(deps: {
  kafka: Kafka;
  db: Db;
  logger: Logger;
  campaignSends: Pick<Client<typeof CampaignSendsService>, "withdrawCampaignEmails">;
  /** Tests with a group of their own use another. */
  groupId?: string;
  /** Tests with a group of their own read the topic from its start. */
  fromBeginning?: boolean;
}): EventConsumer {
  return createProjectWipeConsumer({
    kafka: deps.kafka,
    db: deps.db,
    logger: deps.logger,
    fromBeginning: deps.fromBeginning,
    groupId: deps.groupId ?? projectLifecycleGroupId,
    isProjectId: isId,
    wipe: async ({ projectId, reason, occurredAt }, tx) => {
      const wiped = await deleteProjectCampaigns(tx, projectId, reason === "project.reset" ? occurredAt : null);
      for (const campaign of wiped.filter((candidate) => candidate.mayHaveQueued)) {
        await deps.campaignSends.withdrawCampaignEmails({ projectId, campaignId: campaign.id });
      }
      if (wiped.length > 0) deps.logger.info({ projectId, reason, campaigns: wiped.length }, "project's campaigns wiped");
    },
  });
}
