import type pg from "pg";
import type { AddressHash } from "../domain/address-hash.js";
import type { CapStanding } from "../domain/billing-caps.js";
import { capSql, capStandingsOf, thisMonthSql } from "./monthly-usage.js";

/** What a send, an enqueue or a claim asks of its projects and recipients before it goes on; each part may be left out. */
export interface StandingsAsked {
  /** Which of these projects are suspended. */
  projectIds?: readonly string[];
  /** Which of these (project, lower-case address) pairs are suppressed. */
  recipients?: ReadonlyArray<{ projectId: string; toEmail: string }>;
  /** Which of these (project, category) pairs are capped, and how much of the month's cap is used. */
  pairs?: ReadonlyArray<{ projectId: string; category: string }>;
}

export interface Standings {
  /** The suspension reasons of the suspended projects asked, by project id. */
  suspended: Map<string, string>;
  /** The suppressed recipients asked, as `project address` strings. */
  suppressed: Set<string>;
  /** The capped pairs asked, by usageKey, with the month's usage as it stands (nothing locked). */
  caps: Map<string, CapStanding>;
}

/** The answers when nothing was asked, or when the caller checked already: nothing suspended, suppressed or capped. */
export const noStandings: Standings = { suspended: new Map(), suppressed: new Set(), caps: new Map() };

/**
 * The answers to a StandingsAsked, in one statement: every send and every claim of unchecked mail asks, so its three
 * questions share a round trip. Suppressions are looked up by the keyed hash of the address; a row an older version
 * wrote without one (a rolling upgrade) by its address, until hashUnhashedSuppressions hashes it.
 */
export async function standingsOf(pool: Pick<pg.Pool, "query">, hashOf: AddressHash, asked: StandingsAsked): Promise<Standings> {
  const projectIds = [...new Set(asked.projectIds)];
  const recipients = asked.recipients ?? [];
  const pairs = asked.pairs ?? [];
  if (projectIds.length + recipients.length + pairs.length === 0) return noStandings;
  const { rows } = await pool.query<{
    kind: "suspended" | "suppressed" | "capped";
    projectId: string;
    name: string;
    cap: string | null;
    used: string | null;
  }>({
    name: "delivery_standings",
    text: `SELECT 'suspended' AS kind, project_id::text AS "projectId", reason AS name, NULL AS cap, NULL AS used
     FROM suspended_projects WHERE project_id = ANY($1::uuid[])
     UNION ALL
     SELECT 'suppressed', asked.project_id::text, asked.email, NULL, NULL
     FROM unnest($2::uuid[], $3::text[], $4::bytea[]) AS asked(project_id, email, hash)
     WHERE EXISTS (SELECT 1 FROM suppressions s WHERE s.project_id = asked.project_id AND s.email_hash = asked.hash)
       OR EXISTS (SELECT 1 FROM suppressions s WHERE s.project_id = asked.project_id AND s.email = asked.email AND s.email_hash IS NULL)
     UNION ALL
     SELECT 'capped', w.project_id::text, w.category, (${capSql("w.category")})::text, coalesce(u.used, 0)::text
     FROM unnest($5::uuid[], $6::text[]) AS w(project_id, category)
     JOIN billing_caps c ON c.project_id = w.project_id
     LEFT JOIN monthly_usage u ON u.project_id = w.project_id AND u.month = ${thisMonthSql} AND u.category = w.category`,
    values: [
      projectIds,
      recipients.map((row) => row.projectId),
      recipients.map((row) => row.toEmail),
      recipients.map((row) => hashOf(row.toEmail)),
      pairs.map((pair) => pair.projectId),
      pairs.map((pair) => pair.category),
    ],
  });
  const suspended = new Map<string, string>();
  const suppressed = new Set<string>();
  const capped: Array<{ projectId: string; category: string; cap: string | null; used: string }> = [];
  for (const row of rows) {
    if (row.kind === "suspended") suspended.set(row.projectId, row.name);
    else if (row.kind === "suppressed") suppressed.add(`${row.projectId} ${row.name}`);
    else capped.push({ projectId: row.projectId, category: row.name, cap: row.cap, used: row.used ?? "0" });
  }
  return { suspended, suppressed, caps: capStandingsOf(capped) };
}
