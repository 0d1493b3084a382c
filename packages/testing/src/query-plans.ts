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

/**
 * The plan with each partition, and each partition's index, named as the partitioned table or index it belongs to
 * (pg_partition_root), so that a plan over monthly partitions reads as the statement's own tables and indexes do.
 */
export async function asPartitionedTables(pool: pg.Pool, plan: PlanNode): Promise<PlanNode> {
  const names = [...new Set(nodesOf(plan).flatMap((node) => [node["Relation Name"], node["Index Name"]]))].filter(
    (name): name is string => name !== undefined,
  );
  const { rows } = await pool.query<{ name: string; root: string }>(
    `SELECT n.name, coalesce(pg_partition_root(to_regclass(quote_ident(n.name)))::regclass::text, n.name) AS root
     FROM unnest($1::text[]) AS n(name)`,
    [names],
  );
  const roots = new Map(rows.map((row) => [row.name, row.root.replace(/^.*\./, "").replaceAll('"', "")]));
  const renamed = (node: PlanNode): PlanNode => ({
    ...node,
    ...(node["Relation Name"] ? { "Relation Name": roots.get(node["Relation Name"]) ?? node["Relation Name"] } : {}),
    ...(node["Index Name"] ? { "Index Name": roots.get(node["Index Name"]) ?? node["Index Name"] } : {}),
    ...(node.Plans ? { Plans: node.Plans.map(renamed) } : {}),
  });
  return renamed(plan);
}

/**
 * The plan's sequential scans of tables that hold pages: a month's partition with no rows yet (the months created ahead)
 * is read whole at no cost, and is not one.
 */
export async function seqScansOfStoredRows(pool: pg.Pool, plan: PlanNode): Promise<PlanNode[]> {
  const scans = nodesOf(plan).filter((node) => node["Node Type"] === "Seq Scan");
  const { rows } = await pool.query<{ name: string }>(
    "SELECT n.name FROM unnest($1::text[]) AS n(name) JOIN pg_class c ON c.oid = to_regclass(quote_ident(n.name)) WHERE c.relpages > 0",
    [scans.map((node) => node["Relation Name"] ?? "")],
  );
  const stored = new Set(rows.map((row) => row.name));
  return scans.filter((node) => stored.has(node["Relation Name"] ?? ""));
}
