import { create } from "@bufbuild/protobuf";
import { createEnvelope, encodeEnvelope, ensureTopics, topics } from "@herald/kafka";
import { ProjectLifecycleSchema } from "@herald/proto/herald/events/v1/project_lifecycle_pb";
import { createTestKafka } from "./kafka.js";

export interface LifecycleAnnouncer {
  /** Publishes `project.<what>` for the project on herald.project-lifecycle.v1, as identity does. */
  announce(type: string, projectId: string, occurredAt?: Date): Promise<void>;
  stop(): Promise<void>;
}

/** A producer on the shared broker for tests of the services' project-lifecycle consumers. */
export async function startLifecycleAnnouncer(brokers: string[]): Promise<LifecycleAnnouncer> {
  const kafka = createTestKafka(brokers);
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [topics.projectLifecycle]);
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  return {
    async announce(type, projectId, occurredAt = new Date()) {
      const envelope = createEnvelope({
        type,
        projectId,
        source: "identity",
        occurredAt,
        payloadSchema: ProjectLifecycleSchema,
        payload: create(ProjectLifecycleSchema, { projectId }),
      });
      await producer.send({ topic: topics.projectLifecycle, messages: [{ key: projectId, value: Buffer.from(encodeEnvelope(envelope)) }] });
    },
    stop: () => producer.disconnect(),
  };
}
