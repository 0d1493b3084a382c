import type { Admin } from "kafkajs";

/** The topics of ARCHITECTURE.md; names are part of the contract. */
export const topics = {
  contactEvents: "herald.contact-events.v1",
  emailActivity: "herald.email-activity.v1",
  projectLifecycle: "herald.project-lifecycle.v1",
  /** contact.created, contact.updated, contact.deleted (contacts); outbound webhooks consume them. */
  contactChanges: "herald.contact-changes.v1",
  /** campaign.sent, campaign.paused (campaigns). */
  campaignEvents: "herald.campaign-events.v1",
  /** workflow.execution.completed, workflow.execution.failed (automation). */
  workflowExecutions: "herald.workflow-executions.v1",
} as const;

export type TopicName = (typeof topics)[keyof typeof topics];

const leaderWaitMs = 30_000;

/**
 * Creates missing topics and returns once every partition of every named topic has a
 * leader that serves it; safe to call from every replica at start. The wait matters on a fresh broker:
 * when two services start together, the one that loses the creation race would
 * otherwise subscribe before the partitions exist and fail with
 * UNKNOWN_TOPIC_OR_PARTITION.
 */
export async function ensureTopics(admin: Admin, names: readonly string[], numPartitions = 6): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = names.filter((name) => !existing.has(name));
  if (missing.length > 0) {
    try {
      // kafkajs's own wait for leaders gives up within a second or two on a busy fresh broker; ours below does not.
      await admin.createTopics({ waitForLeaders: false, topics: missing.map((topic) => ({ topic, numPartitions })) });
    } catch (error) {
      // Another replica created it between our list and create.
      if ((error as { type?: string }).type !== "TOPIC_ALREADY_EXISTS") throw error;
    }
  }
  await waitForLeaders(admin, names);
}

async function waitForLeaders(admin: Admin, names: readonly string[]): Promise<void> {
  const deadline = Date.now() + leaderWaitMs;
  for (;;) {
    let lastError: unknown;
    try {
      const { topics: metadata } = await admin.fetchTopicMetadata({ topics: [...names] });
      const ready = metadata.every((topic) => topic.partitions.length > 0 && topic.partitions.every((partition) => partition.leader >= 0));
      if (ready && metadata.length === names.length) {
        // A leader in the metadata is not yet a partition the broker serves: ask each for its offsets.
        await Promise.all(names.map((topic) => admin.fetchTopicOffsets(topic)));
        return;
      }
    } catch (error) {
      // A topic created a moment ago may not have reached this broker's metadata or logs yet.
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`Kafka topics ${names.join(", ")} have no partition leaders after ${leaderWaitMs / 1000} s`, {
        cause: lastError,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
