import { type CounterColumn, firstOnly } from "../domain/counters.js";
import type { Tx } from "./campaigns.js";
import { Prisma } from "./generated/client.js";

export interface CampaignCount {
  projectId: string;
  campaignId: string;
  emailId: string;
  counter: CounterColumn;
}

/**
 * Adds a chunk's activity to the campaigns' counters in one UPDATE per counter. An open, click,
 * complaint or unsubscribe counts only when its (campaign, email, kind) is new.
 */
export async function applyCampaignCounts(tx: Tx, counts: readonly CampaignCount[]): Promise<void> {
  if (counts.length === 0) return;
  const kept: CampaignCount[] = [];
  const once = counts.filter((count) => firstOnly.has(count.counter));
  if (once.length > 0) {
    const fresh = await tx.$queryRaw<Array<{ campaign_id: string; email_id: string; kind: string }>>`
      INSERT INTO campaign_engagements (project_id, campaign_id, email_id, kind)
      SELECT * FROM unnest(${once.map((c) => c.projectId)}::uuid[], ${once.map((c) => c.campaignId)}::uuid[],
        ${once.map((c) => c.emailId)}::text[], ${once.map((c) => c.counter)}::text[])
      ON CONFLICT DO NOTHING
      RETURNING campaign_id::text AS campaign_id, email_id, kind`;
    const firsts = new Set(fresh.map((row) => `${row.campaign_id} ${row.email_id} ${row.kind}`));
    for (const count of once) if (firsts.delete(`${count.campaignId} ${count.emailId} ${count.counter}`)) kept.push(count);
  }
  kept.push(...counts.filter((count) => !firstOnly.has(count.counter)));
  const byCounter = new Map<CounterColumn, Map<string, { projectId: string; n: number }>>();
  for (const count of kept) {
    const perCampaign = byCounter.get(count.counter) ?? new Map<string, { projectId: string; n: number }>();
    const entry = perCampaign.get(count.campaignId) ?? { projectId: count.projectId, n: 0 };
    entry.n += 1;
    perCampaign.set(count.campaignId, entry);
    byCounter.set(count.counter, perCampaign);
  }
  for (const [counter, perCampaign] of byCounter) {
    const ids = [...perCampaign.keys()];
    const projects = ids.map((id) => perCampaign.get(id)?.projectId ?? "");
    const ns = ids.map((id) => perCampaign.get(id)?.n ?? 0);
    // The column is one of counterColumns' fixed names, never input.
    await tx.$executeRaw`
      UPDATE campaigns c SET ${Prisma.raw(counter)} = c.${Prisma.raw(counter)} + d.n
      FROM unnest(${ids}::uuid[], ${projects}::uuid[], ${ns}::int[]) AS d(id, project_id, n)
      WHERE c.id = d.id AND c.project_id = d.project_id`;
  }
}
