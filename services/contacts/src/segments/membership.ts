import { randomUUID } from "node:crypto";
import type { ConditionTree } from "@herald/conditions";
import type { Db } from "../db/client.js";
import { insertContactEvents } from "../db/event-records.js";
import type { SegmentRow } from "../db/segments.js";
import { pendingContactEvent } from "../events/contact-event-outbox.js";
import { conditionSql, loadConditionScope } from "./condition-scope.js";

export interface MembershipChange {
  added: number;
  removed: number;
  /** Members after the evaluation: all of them for a full one, unknown (-1) for one restricted to some contacts. */
  total: number;
}

/** A full evaluation of 1,000,000 contacts writes its entries in one transaction; Prisma's 5 s default is too short. */
const transactionTimeoutMs = 10 * 60_000;

/** Rows of events written per statement, so that a large entry wave is not one huge array. */
const eventBatchSize = 5_000;

/**
 * Brings the stored membership of a tracked dynamic segment in line with its
 * condition and records `segment.<slug>.entry` / `.exit` on every contact that
 * joined or left, with their outbox rows, in one transaction. An entry is emitted
 * only by the INSERT that actually added the member row and an exit only by the
 * DELETE that removed it, and evaluations of one segment are serialised by a
 * transaction-scoped advisory lock, so each transition is emitted exactly once
 * however many replicas evaluate at the same time.
 *
 * `contactIds` restricts the evaluation to those contacts (the ones that just changed).
 */
export async function evaluateMembership(
  db: Db,
  segment: SegmentRow,
  options: { contactIds?: string[] } = {},
): Promise<MembershipChange & { contactIds: string[] }> {
  const scope = await loadConditionScope(db, segment.projectId);
  const condition = conditionSql(segment.condition as unknown as ConditionTree, scope, 4);
  const restricted = options.contactIds !== undefined;
  const only = restricted ? `AND c.id = ANY($${4 + condition.values.length}::uuid[])` : "";
  const onlyMembers = restricted ? `AND m.contact_id = ANY($${4 + condition.values.length}::uuid[])` : "";
  const text = `
    WITH live AS (
      SELECT c.id FROM contacts c WHERE c.project_id = $1::uuid AND (${condition.sql}) ${only}
    ), entered AS (
      INSERT INTO segment_members (project_id, segment_id, contact_id)
      SELECT $1::uuid, $2::uuid, id FROM live ON CONFLICT DO NOTHING RETURNING contact_id
    ), exited AS (
      DELETE FROM segment_members m
      WHERE m.project_id = $1::uuid AND m.segment_id = $2::uuid ${onlyMembers} AND NOT EXISTS (SELECT 1 FROM live WHERE live.id = m.contact_id)
      RETURNING m.contact_id
    )
    SELECT true AS entered, c.id::text AS "contactId", c.email FROM entered JOIN contacts c ON c.id = entered.contact_id
    UNION ALL
    SELECT false, c.id::text, c.email FROM exited JOIN contacts c ON c.id = exited.contact_id
    UNION ALL
    SELECT NULL, NULL, (SELECT count(*) FROM live)::text WHERE $3::boolean`;
  const values: unknown[] = [segment.projectId, segment.id, !restricted, ...condition.values];
  if (restricted) values.push(options.contactIds);

  return db.$transaction(
    async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${segment.id}, 0))`;
      const rows = await tx.$queryRawUnsafe<Array<{ entered: boolean | null; contactId: string | null; email: string }>>(text, ...values);
      const now = new Date();
      const changes = rows.filter((row) => row.entered !== null);
      const events = changes.map((row) => ({
        ...pendingContactEvent({
          id: randomUUID(),
          name: `segment.${segment.slug}.${row.entered ? "entry" : "exit"}`,
          projectId: segment.projectId,
          contactEmail: row.email,
          data: { segmentId: segment.id, segmentName: segment.name },
          occurredAt: now,
        }),
        contactId: row.contactId as string,
      }));
      for (let start = 0; start < events.length; start += eventBatchSize) {
        await insertContactEvents(tx, events.slice(start, start + eventBatchSize));
      }
      const added = changes.filter((row) => row.entered).length;
      const removed = changes.length - added;
      const counted = rows.find((row) => row.entered === null);
      const total = counted ? Number(counted.email) : -1;
      if (counted) {
        await tx.$executeRaw`UPDATE segments SET member_count = ${total}, counted_at = now() WHERE id = ${segment.id}::uuid`;
      } else if (added !== removed) {
        await tx.$executeRaw`UPDATE segments SET member_count = member_count + ${added - removed} WHERE id = ${segment.id}::uuid`;
      }
      return { added, removed, total, contactIds: changes.map((row) => row.contactId as string) };
    },
    { timeout: transactionTimeoutMs, maxWait: transactionTimeoutMs },
  );
}
