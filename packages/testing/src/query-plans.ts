import type pg from "pg";

/** A node of PostgreSQL's JSON plan, as far as the tests read it. */
export interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Total Cost"?: number;
  Plans?: PlanNode[];
}

/** The node and every node under it. */
export const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/**
 * Runs `work` on the pool's connection (a pool of one) with auto_explain reporting each statement's plan
 * to the client, and answers the plans of the statements whose text includes `marker`.
 */
export async function plansOf(pool: pg.Pool, marker: string, work: () => Promise<unknown>): Promise<PlanNode[]> {
  const client = await pool.connect();
  const reports: string[] = [];
  const onNotice = (notice: { message?: string }) => reports.push(notice.message ?? "");
  client.on("notice", onNotice);
  try {
    await client.query("LOAD 'auto_explain'");
    await client.query("SET auto_explain.log_min_duration = 0; SET auto_explain.log_format = json; SET auto_explain.log_level = notice");
    client.release();
    await work();
  } finally {
    const again = await pool.connect();
    await again.query("SET auto_explain.log_min_duration = -1");
    again.off("notice", onNotice);
    again.release();
  }
  return reports
    .filter((report) => report.includes(marker))
    .map((report) => (JSON.parse(report.slice(report.indexOf("{"))) as { Plan: PlanNode }).Plan);
}
