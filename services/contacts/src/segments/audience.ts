import type { ConditionTree } from "@herald/conditions";
import { DomainError } from "@herald/errors";
import type { Db, SqlPool } from "../db/client.js";
import { findSegment } from "../db/segments.js";
import type { JsonObject } from "../domain/contact-data.js";
import { isId, requireProjectId } from "../domain/ids.js";
import { segmentNotFound } from "../domain/segment-rules.js";
import { conditionSql, loadConditionScope, validTree } from "./condition-scope.js";

/** Who a campaign goes to: every subscribed contact, a segment's, or those of a condition tree. */
export type Audience = { kind: "all" } | { kind: "segment"; segmentId: string } | { kind: "condition"; condition: JsonObject };

export interface AudienceContact {
  id: string;
  email: string;
  /** The data as stored, JSON text: read by the caller, not by this service. */
  dataJson: string;
}

export const audienceBatchLimits = { fallback: 1_000, max: 5_000 };

export interface Audiences {
  /** Subscribed, unsnoozed members in batches ordered by id, from after `afterContactId`. */
  stream(projectId: string, audience: Audience, options: { batchSize: number; afterContactId: string }): AsyncGenerator<AudienceContact[]>;
  count(projectId: string, audience: Audience): Promise<number>;
}

interface AudienceFilter {
  /** Joins and conditions after `FROM contacts c`, with the project at $1 and values from $2. */
  sql: string;
  values: unknown[];
}

/**
 * Audience resolution for campaigns. The members of an audience are the contacts
 * that are subscribed and not snoozed at the time of the query (a snooze pauses
 * marketing sends); batches are keyset-paginated on the contact id over the
 * (project_id, id) index, so each one costs the same however deep the stream is.
 */
export function createAudiences(deps: { db: Db; pool: SqlPool }): Audiences {
  const { db, pool } = deps;

  async function filterOf(projectId: string, audience: Audience): Promise<AudienceFilter> {
    switch (audience.kind) {
      case "all":
        return { sql: "", values: [] };
      case "condition": {
        const scope = await loadConditionScope(db, projectId);
        const condition = conditionSql(validTree(audience.condition, scope, "audience.condition"), scope, 2);
        return { sql: `AND (${condition.sql})`, values: condition.values };
      }
      case "segment": {
        const segment = isId(audience.segmentId) ? await findSegment(db, projectId, audience.segmentId) : undefined;
        if (!segment) throw segmentNotFound();
        if (segment.type === "STATIC") {
          return {
            sql: "AND EXISTS (SELECT 1 FROM segment_members m WHERE m.project_id = c.project_id AND m.segment_id = $2::uuid AND m.contact_id = c.id)",
            values: [segment.id],
          };
        }
        const scope = await loadConditionScope(db, projectId);
        const condition = conditionSql(segment.condition as unknown as ConditionTree, scope, 2);
        return { sql: `AND (${condition.sql})`, values: condition.values };
      }
    }
  }

  const reachable = "c.subscribed AND (c.snoozed_until IS NULL OR c.snoozed_until <= now())";

  return {
    async *stream(projectId, audience, options) {
      requireProjectId(projectId);
      if (options.afterContactId !== "" && !isId(options.afterContactId)) {
        throw new DomainError("invalid-argument", "INVALID_CURSOR", "after_contact_id must be a contact id");
      }
      const batchSize = options.batchSize <= 0 ? audienceBatchLimits.fallback : Math.min(options.batchSize, audienceBatchLimits.max);
      const filter = await filterOf(projectId, audience);
      const after = `$${filter.values.length + 2}`;
      const limit = `$${filter.values.length + 3}`;
      const text = `
        SELECT c.id::text AS id, c.email, c.data::text AS "dataJson" FROM contacts c
        WHERE c.project_id = $1::uuid AND ${reachable} ${filter.sql} AND c.id > ${after}::uuid
        ORDER BY c.id LIMIT ${limit}`;
      const batchAfter = async (cursor: string) =>
        (await pool.query<AudienceContact>({ text, values: [projectId, ...filter.values, cursor, batchSize] })).rows;
      // The smallest uuid stands for "from the start", so that every batch runs the same prepared statement.
      let next = batchAfter(options.afterContactId || "00000000-0000-0000-0000-000000000000");
      try {
        for (;;) {
          const rows = await next;
          const more = rows.length === batchSize;
          // The next batch is read while the caller takes this one: the database and the stream overlap.
          if (more) next = batchAfter((rows.at(-1) as AudienceContact).id);
          if (rows.length > 0) yield rows;
          if (!more) return;
        }
      } finally {
        // A caller that stops early leaves a read in flight: its failure has nobody to tell.
        next.catch(() => {});
      }
    },

    async count(projectId, audience) {
      requireProjectId(projectId);
      const filter = await filterOf(projectId, audience);
      const { rows } = await pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM contacts c WHERE c.project_id = $1::uuid AND ${reachable} ${filter.sql}`,
        [projectId, ...filter.values],
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}
