import { type CampaignFacts, writeCampaignEvent } from "../events/campaign-event-outbox.js";
import type { Db } from "./client.js";
import { type Campaign, Prisma } from "./generated/client.js";

export type CampaignRow = Campaign;
export type Tx = Prisma.TransactionClient;

/**
 * The audience_condition column's value (and the editor column's): the tree, or a database NULL. Prisma writes a plain
 * null of a Json column only through Prisma.DbNull; `{ set: null }` (as an update once wrote)
 * is stored as the JSON object {"set": null}.
 */
export const audienceConditionColumn = (condition: object | null): object | typeof Prisma.DbNull => condition ?? Prisma.DbNull;

export interface CampaignListQuery {
  page: number;
  pageSize: number;
  status?: string;
  search: string;
  sort: "createdAt" | "updatedAt" | "name";
  direction: "asc" | "desc";
}

export async function listCampaigns(db: Db, projectId: string, query: CampaignListQuery): Promise<{ rows: CampaignRow[]; total: number }> {
  const search = query.search.trim();
  const where: Prisma.CampaignWhereInput = {
    projectId,
    ...(query.status ? { status: query.status } : {}),
    ...(search
      ? {
          OR: [
            { name: { contains: search, mode: "insensitive" } },
            { subject: { contains: search, mode: "insensitive" } },
            { fromAddress: { contains: search, mode: "insensitive" } },
          ],
        }
      : {}),
  };
  const [rows, total] = await Promise.all([
    db.campaign.findMany({
      where,
      // The id breaks ties, so that a page boundary never repeats or skips a campaign.
      orderBy: [{ [query.sort]: query.direction }, { id: query.direction }],
      skip: (query.page - 1) * query.pageSize,
      take: query.pageSize,
    }),
    db.campaign.count({ where }),
  ]);
  return { rows, total };
}

export const findCampaign = (db: Db | Tx, projectId: string, id: string): Promise<CampaignRow | null> =>
  db.campaign.findFirst({ where: { projectId, id } });

/** The campaign, its row locked until the transaction ends: status moves and fan-out batches take turns on it. */
export async function lockCampaign(tx: Tx, projectId: string, id: string): Promise<CampaignRow | null> {
  const locked = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT id::text AS id FROM campaigns WHERE id = ${id}::uuid AND project_id = ${projectId}::uuid FOR UPDATE`;
  if (locked.length === 0) return null;
  return findCampaign(tx, projectId, id);
}

/**
 * SCHEDULED campaigns whose time has come move to SENDING; SKIP LOCKED: each is moved by one replica.
 * A stopped (disabled) project's stay SCHEDULED, and start once it is enabled again.
 */
export async function startDueCampaigns(db: Db): Promise<number> {
  return db.$executeRaw`
    UPDATE campaigns SET status = 'SENDING', sent_at = now(), updated_at = now()
    WHERE id IN (
      SELECT id FROM campaigns WHERE status = 'SCHEDULED' AND scheduled_for <= now()
        AND project_id NOT IN (SELECT project_id FROM stopped_projects)
      ORDER BY scheduled_for LIMIT 100 FOR UPDATE SKIP LOCKED
    )`;
}

/**
 * Claims one SENDING campaign whose fan-out is unfinished and unowned (or whose owner's lease
 * lapsed: it died or stalled), for `owner` until `leaseMs` from now; none of a stopped (disabled) project.
 * Campaigns take turns: one never claimed first, then the one whose last checkpoint is oldest (its lease
 * ends soonest), so that a long fan-out yields to the others after each turn instead of going first to the end.
 */
export async function claimFanOut(db: Db, owner: string, leaseMs: number): Promise<CampaignRow | null> {
  const claimed = await db.$queryRaw<Array<{ id: string; project_id: string }>>`
    UPDATE campaigns SET fanout_owner = ${owner}, fanout_lease_until = now() + make_interval(secs => ${leaseMs / 1000}::double precision)
    WHERE id = (
      SELECT id FROM campaigns
      WHERE status = 'SENDING' AND NOT fanout_done
        AND project_id NOT IN (SELECT project_id FROM stopped_projects)
        AND (fanout_lease_until IS NULL OR fanout_lease_until < now() OR fanout_owner = ${owner})
      ORDER BY fanout_lease_until NULLS FIRST, sent_at LIMIT 1 FOR UPDATE SKIP LOCKED
    )
    RETURNING id::text AS id, project_id::text AS project_id`;
  const [row] = claimed;
  return row ? findCampaign(db, row.project_id, row.id) : null;
}

/** Records a committed batch: the cursor moves past it, the recipients are added, the lease renewed. */
export async function checkpointFanOut(
  tx: Tx,
  id: string,
  progress: { cursor: string; recipients: number; done: boolean; leaseMs: number },
): Promise<void> {
  await tx.$executeRaw`
    UPDATE campaigns SET fanout_cursor = ${progress.cursor}::uuid, total_recipients = total_recipients + ${progress.recipients},
      fanout_done = ${progress.done}, updated_at = now(),
      fanout_lease_until = now() + make_interval(secs => ${progress.leaseMs / 1000}::double precision)
    WHERE id = ${id}::uuid`;
}

/**
 * Hands back the fan-outs a stopping process owns: the next claim, by any process, resumes each from its checkpoint
 * at once, instead of waiting for the lease to lapse, as it must after a crash.
 */
export async function handBackFanOuts(db: Db, owner: string): Promise<void> {
  await db.$executeRaw`UPDATE campaigns SET fanout_owner = NULL, fanout_lease_until = NULL WHERE fanout_owner = ${owner}`;
}

/** Gives up a claim without moving the cursor (the project stopped): whoever claims it later resumes from the checkpoint. */
export async function releaseFanOut(tx: Tx, id: string): Promise<void> {
  await tx.$executeRaw`UPDATE campaigns SET fanout_owner = NULL, fanout_lease_until = NULL WHERE id = ${id}::uuid`;
}

export async function finishFanOut(db: Db | Tx, id: string): Promise<void> {
  await db.$executeRaw`UPDATE campaigns SET fanout_done = true, fanout_owner = NULL, fanout_lease_until = NULL, updated_at = now() WHERE id = ${id}::uuid`;
}

/** SENDING campaigns whose fan-out has finished: SENT once delivery holds none of their emails in its queue. */
export const fannedOutCampaigns = (db: Db): Promise<Array<{ id: string; projectId: string }>> =>
  db.campaign.findMany({ where: { status: "SENDING", fanoutDone: true }, select: { id: true, projectId: true }, take: 50 });

/** SENT, with its campaign.sent in the same transaction; nothing when it was no longer SENDING (cancelled meanwhile). */
export async function markSent(db: Db, id: string): Promise<void> {
  await db.$transaction(async (tx) => {
    const [sent] = await tx.$queryRaw<CampaignFacts[]>`
      UPDATE campaigns SET status = 'SENT', updated_at = now()
      WHERE id = ${id}::uuid AND status = 'SENDING'
      RETURNING ${campaignFactsColumns}`;
    if (sent) await writeCampaignEvent(tx, "campaign.sent", sent);
  });
}

/** The columns of CampaignFacts, for raw statements. */
export const campaignFactsColumns = Prisma.raw(
  `id::text AS id, project_id::text AS "projectId", name, subject, total_recipients AS recipients`,
);

/** Stops a campaign for a reason of the platform's (its audience is gone, say): CANCELLED with the reason shown. */
/**
 * CANCELLED with the reason shown as stopReason. Its queued emails are withdrawn (unwithdrawnCampaigns), unless
 * `keepQueued`: then there is nothing to withdraw, and withdrawnAt says so at once.
 */
export async function stopCampaign(db: Db, id: string, reason: string, options: { keepQueued?: boolean } = {}): Promise<void> {
  await db.campaign.updateMany({
    where: { id, status: { in: ["SCHEDULED", "SENDING"] } },
    data: {
      status: "CANCELLED",
      stopReason: reason,
      fanoutOwner: null,
      fanoutLeaseUntil: null,
      ...(options.keepQueued ? { withdrawnAt: new Date() } : {}),
    },
  });
}

/** CANCELLED campaigns whose queued emails delivery has not yet confirmed withdrawn. */
export const unwithdrawnCampaigns = (db: Db): Promise<Array<{ id: string; projectId: string }>> =>
  db.campaign.findMany({
    where: { status: "CANCELLED", withdrawnAt: null, sentAt: { not: null } },
    select: { id: true, projectId: true },
    take: 50,
  });

export async function markWithdrawn(db: Db, id: string): Promise<void> {
  await db.campaign.update({ where: { id }, data: { withdrawnAt: new Date() } });
}

/** A campaign a project wipe removed, with what delivery may still hold queued for it. */
export interface WipedCampaign {
  id: string;
  /** It had started sending and its queued emails were not withdrawn yet (SENDING, or cancelled meanwhile). */
  mayHaveQueued: boolean;
}

/**
 * Deletes a project's campaigns (those created up to `cutoff`, or all) with their engagement
 * rows. The rows are locked first, so a fan-out batch under way commits before they go and
 * none starts after (it finds no campaign).
 */
export async function deleteProjectCampaigns(tx: Tx, projectId: string, cutoff: Date | null): Promise<WipedCampaign[]> {
  const rows = await tx.$queryRaw<Array<{ id: string; may_have_queued: boolean }>>`
    SELECT id::text AS id,
      (sent_at IS NOT NULL AND (status = 'SENDING' OR (status = 'CANCELLED' AND withdrawn_at IS NULL))) AS may_have_queued
    FROM campaigns
    WHERE project_id = ${projectId}::uuid AND created_at <= coalesce(${cutoff}::timestamptz, 'infinity'::timestamptz)
    FOR UPDATE`;
  const ids = rows.map((row) => row.id);
  if (ids.length > 0) {
    await tx.$executeRaw`DELETE FROM campaign_engagements WHERE project_id = ${projectId}::uuid AND campaign_id = ANY(${ids}::uuid[])`;
    await tx.$executeRaw`DELETE FROM campaigns WHERE id = ANY(${ids}::uuid[])`;
  }
  return rows.map((row) => ({ id: row.id, mayHaveQueued: row.may_have_queued }));
}
