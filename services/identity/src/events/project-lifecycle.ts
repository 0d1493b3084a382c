import { create } from "@bufbuild/protobuf";
import { createEnvelope, topics, writeOutboxEvent } from "@herald/kafka";
import { BillingLimitsChangedSchema, ProjectLifecycleSchema } from "@herald/proto/herald/events/v1/project_lifecycle_pb";
import type { Tx } from "../db/client.js";
import type { BillingLimits } from "../domain/usage-category.js";

/** The envelope types of herald.project-lifecycle.v1 (project_lifecycle.proto). */
export type ProjectLifecycleType =
  | "project.created"
  | "project.updated"
  | "project.disabled"
  | "project.suspended"
  | "project.enabled"
  | "project.keys_rotated"
  | "project.reset"
  | "project.deleted";

/**
 * The status event of a project's state after a change (what its background work should do): disabled by a
 * member wins, then suspended by the reputation guard (its reason rides along), else enabled. Every change of
 * either flag publishes it, so that a consumer's copy is the last event it read.
 */
export async function recordProjectStatus(
  tx: Tx,
  project: { id: string; disabled: boolean; suspendedReason: string | null },
  actorUserId: string,
): Promise<void> {
  if (project.disabled) await recordProjectEvent(tx, "project.disabled", project.id, actorUserId);
  else if (project.suspendedReason !== null)
    await recordProjectEvent(tx, "project.suspended", project.id, actorUserId, project.suspendedReason);
  else await recordProjectEvent(tx, "project.enabled", project.id, actorUserId);
}

/**
 * Records a lifecycle event in the outbox inside the transaction that made the
 * change; keyed by project id, so each project's events stay in order.
 */
export async function recordProjectEvent(
  tx: Tx,
  type: ProjectLifecycleType,
  projectId: string,
  actorUserId: string,
  reason = "",
): Promise<void> {
  const envelope = createEnvelope({
    type,
    projectId,
    source: "identity",
    payloadSchema: ProjectLifecycleSchema,
    payload: create(ProjectLifecycleSchema, { projectId, actorUserId, reason }),
  });
  await writeOutboxEvent(tx, topics.projectLifecycle, envelope);
}

/**
 * Announces a project's caps as they now are (project.billing_limits_changed), in the
 * transaction that changed them: delivery keeps a copy and refuses enqueues past them.
 */
export async function recordBillingLimitsChanged(tx: Tx, projectId: string, limits: BillingLimits, actorUserId = ""): Promise<void> {
  const envelope = createEnvelope({
    type: "project.billing_limits_changed",
    projectId,
    source: "identity",
    payloadSchema: BillingLimitsChangedSchema,
    payload: create(BillingLimitsChangedSchema, { projectId, actorUserId, ...limits }),
  });
  await writeOutboxEvent(tx, topics.projectLifecycle, envelope);
}
