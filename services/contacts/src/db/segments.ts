import type { JsonObject } from "../domain/contact-data.js";
import type { Reader } from "./client.js";
import { Prisma } from "./generated/client.js";

export type SegmentType = "DYNAMIC" | "STATIC";

export interface SegmentRow {
  id: string;
  projectId: string;
  name: string;
  description: string;
  type: SegmentType;
  /** The validated condition tree of a DYNAMIC segment; null for STATIC. */
  condition: JsonObject | null;
  trackMembership: boolean;
  slug: string;
  memberCount: number;
  countedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const segmentColumns = Prisma.raw(
  `id::text AS id, project_id::text AS "projectId", name, description, type, condition, ` +
    `track_membership AS "trackMembership", slug, member_count AS "memberCount", counted_at AS "countedAt", ` +
    `created_at AS "createdAt", updated_at AS "updatedAt"`,
);

export interface SegmentWrite {
  name: string;
  description: string;
  condition: JsonObject | null;
  trackMembership: boolean;
  slug: string;
  referencedFields: string[];
  referencedEvents: string[];
}

export async function insertSegment(
  db: Reader,
  projectId: string,
  segment: SegmentWrite & { id: string; type: SegmentType; memberCount: number },
): Promise<SegmentRow> {
  const [row] = await db.$queryRaw<SegmentRow[]>`
    INSERT INTO segments (id, project_id, name, description, type, condition, track_membership, slug, member_count, counted_at,
                          referenced_fields, referenced_events)
    VALUES (${segment.id}::uuid, ${projectId}::uuid, ${segment.name}, ${segment.description}, ${segment.type}, ${jsonb(segment.condition)},
            ${segment.trackMembership}, ${segment.slug}, ${segment.memberCount}, now(),
            ${segment.referencedFields}::text[], ${segment.referencedEvents}::text[])
    RETURNING ${segmentColumns}`;
  if (!row) throw new Error("INSERT … RETURNING returned no row");
  return row;
}

/** Replaces the writable fields; `memberCount` when the caller recounted (a changed condition). */
export async function updateSegment(
  db: Reader,
  projectId: string,
  id: string,
  segment: SegmentWrite & { memberCount: number | undefined },
): Promise<SegmentRow | undefined> {
  const count = segment.memberCount === undefined ? Prisma.empty : Prisma.sql`, member_count = ${segment.memberCount}, counted_at = now()`;
  const [row] = await db.$queryRaw<SegmentRow[]>`
    UPDATE segments SET name = ${segment.name}, description = ${segment.description}, condition = ${jsonb(segment.condition)},
      track_membership = ${segment.trackMembership}, slug = ${segment.slug},
      referenced_fields = ${segment.referencedFields}::text[], referenced_events = ${segment.referencedEvents}::text[],
      updated_at = now() ${count}
    WHERE project_id = ${projectId}::uuid AND id = ${id}::uuid
    RETURNING ${segmentColumns}`;
  return row;
}

const jsonb = (value: JsonObject | null) => (value === null ? null : Prisma.sql`${JSON.stringify(value)}::jsonb`);

export async function findSegment(db: Reader, projectId: string, id: string): Promise<SegmentRow | undefined> {
  const [row] = await db.$queryRaw<SegmentRow[]>`
    SELECT ${segmentColumns} FROM segments WHERE project_id = ${projectId}::uuid AND id = ${id}::uuid`;
  return row;
}

/** Newest first. */
export async function listSegments(db: Reader, projectId: string): Promise<SegmentRow[]> {
  return db.$queryRaw<SegmentRow[]>`
    SELECT ${segmentColumns} FROM segments WHERE project_id = ${projectId}::uuid ORDER BY created_at DESC, segments.id DESC`;
}

/** The project's DYNAMIC segments with trackMembership. */
export async function listTrackedSegments(db: Reader, projectId: string): Promise<SegmentRow[]> {
  return db.$queryRaw<SegmentRow[]>`
    SELECT ${segmentColumns} FROM segments WHERE project_id = ${projectId}::uuid AND type = 'DYNAMIC' AND track_membership`;
}

export async function deleteSegment(db: Reader, projectId: string, id: string): Promise<boolean> {
  return (await db.$executeRaw`DELETE FROM segments WHERE project_id = ${projectId}::uuid AND id = ${id}::uuid`) === 1;
}

export async function setMemberCount(db: Reader, id: string, memberCount: number): Promise<SegmentRow | undefined> {
  const [row] = await db.$queryRaw<SegmentRow[]>`
    UPDATE segments SET member_count = ${memberCount}, counted_at = now() WHERE id = ${id}::uuid RETURNING ${segmentColumns}`;
  return row;
}

/** Tracked dynamic segments of every project whose last scheduled evaluation is older than the interval, claimed for this run. */
export async function claimDueTrackedSegments(db: Reader, intervalMs: number, limit: number): Promise<SegmentRow[]> {
  return db.$queryRaw<SegmentRow[]>`
    UPDATE segments SET evaluated_at = now()
    WHERE id IN (
      SELECT id FROM segments
      WHERE type = 'DYNAMIC' AND track_membership
        AND (evaluated_at IS NULL OR evaluated_at < now() - ${intervalMs} * interval '1 millisecond')
      ORDER BY evaluated_at NULLS FIRST LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    RETURNING ${segmentColumns}`;
}

/** Segments whose condition reads a top-level data key, or an event name (usage endpoints). */
export async function segmentsReferencing(
  db: Reader,
  projectId: string,
  reference: { field: string } | { event: string },
): Promise<Array<{ id: string; name: string }>> {
  const match =
    "field" in reference
      ? Prisma.sql`${reference.field} = ANY(referenced_fields)`
      : Prisma.sql`${reference.event} = ANY(referenced_events)`;
  return db.$queryRaw`
    SELECT id::text AS id, name FROM segments WHERE project_id = ${projectId}::uuid AND ${match} ORDER BY created_at DESC`;
}

/** Adds the contacts to a static segment; the ids that were not members before. */
export async function addSegmentMembers(db: Reader, projectId: string, segmentId: string, contactIds: string[]): Promise<number> {
  if (contactIds.length === 0) return 0;
  return db.$executeRaw`
    INSERT INTO segment_members (project_id, segment_id, contact_id)
    SELECT ${projectId}::uuid, ${segmentId}::uuid, id FROM unnest(${contactIds}::uuid[]) AS id
    ON CONFLICT DO NOTHING`;
}

export async function removeSegmentMembers(db: Reader, projectId: string, segmentId: string, contactIds: string[]): Promise<number> {
  if (contactIds.length === 0) return 0;
  return db.$executeRaw`
    DELETE FROM segment_members
    WHERE project_id = ${projectId}::uuid AND segment_id = ${segmentId}::uuid AND contact_id = ANY(${contactIds}::uuid[])`;
}

/** Drops the stored membership of a segment (a DYNAMIC one no longer tracked). */
export async function clearSegmentMembers(db: Reader, projectId: string, segmentId: string): Promise<void> {
  await db.$executeRaw`DELETE FROM segment_members WHERE project_id = ${projectId}::uuid AND segment_id = ${segmentId}::uuid`;
}

export async function countStaticMembers(db: Reader, projectId: string, segmentId: string): Promise<number> {
  const [row] = await db.$queryRaw<Array<{ n: bigint }>>`
    SELECT count(*) AS n FROM segment_members WHERE project_id = ${projectId}::uuid AND segment_id = ${segmentId}::uuid`;
  return Number(row?.n ?? 0);
}
