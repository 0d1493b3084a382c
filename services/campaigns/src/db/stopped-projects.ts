import type { ProjectStatusEvent } from "@herald/kafka";
import { type CampaignFacts, writeCampaignEvent } from "../events/campaign-event-outbox.js";
import { campaignFactsColumns, type Tx } from "./campaigns.js";

/**
 * Records that a project's campaigns must stop sending, and waits for the fan-out batches under way:
 * the project's SENDING campaigns are locked in this transaction, so a batch holding one commits
 * first, and every batch after it (commitBatch reads the table under the same lock) sees the row.
 *
 * Those campaigns are paused: they stay SENDING and go on where they stopped when the project is
 * enabled again. Each gets a campaign.paused, once per stop (a redelivered event, or a second reason
 * while stopped, adds none), except when the project is deleted: its campaigns go with it.
 */
export async function stopProject(
  tx: Tx,
  projectId: string,
  reason: Exclude<ProjectStatusEvent, "project.enabled">,
  at: Date,
  detail = "",
): Promise<void> {
  const [stop] = await tx.$queryRaw<Array<{ first: boolean }>>`
    INSERT INTO stopped_projects AS s (project_id, reason, stopped_at) VALUES (${projectId}::uuid, ${reason}, ${at})
    ON CONFLICT (project_id) DO UPDATE SET reason = excluded.reason, stopped_at = excluded.stopped_at
    RETURNING (s.xmax = 0) AS first`;
  const paused = await tx.$queryRaw<CampaignFacts[]>`
    SELECT ${campaignFactsColumns} FROM campaigns WHERE project_id = ${projectId}::uuid AND status = 'SENDING' ORDER BY id FOR UPDATE`;
  if (!stop?.first || reason === "project.deleted") return;
  for (const campaign of paused) {
    await writeCampaignEvent(tx, "campaign.paused", campaign, { reason: pauseReasonOf(reason, detail), occurredAt: at });
  }
}

/** Why a campaign paused, in words a person reads. */
function pauseReasonOf(reason: "project.disabled" | "project.suspended", detail: string): string {
  if (reason === "project.suspended") return `The project's sending is suspended: ${detail || "by the reputation guard"}`;
  return "The project is disabled";
}

/** The project may send again: its campaigns go on where they stopped. */
export async function resumeProject(tx: Tx, projectId: string): Promise<void> {
  await tx.$executeRaw`DELETE FROM stopped_projects WHERE project_id = ${projectId}::uuid`;
}

export async function isProjectStopped(tx: Tx, projectId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<unknown[]>`SELECT 1 FROM stopped_projects WHERE project_id = ${projectId}::uuid`;
  return rows.length > 0;
}
