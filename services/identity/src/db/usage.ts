import { billingPeriodOf, dayOf } from "../domain/billing-period.js";
import type { EmailActivityEffect } from "../domain/email-activity-effect.js";
import { type Consumption, usageCategories } from "../domain/usage-category.js";
import type { Reader, Tx } from "./client.js";

/** 'YYYY-MM-DD' of the UTC day: a bare date, so the database session's time zone cannot shift it. */
const isoDate = (instant: Date): string => instant.toISOString().slice(0, 10);

/**
 * Applies one email-activity event to the counters. Every write selects the
 * project first, so events of a deleted project change nothing.
 */
export async function applyEmailActivity(tx: Tx, projectId: string, occurredAt: Date, effect: EmailActivityEffect): Promise<void> {
  if (effect.usage) {
    await tx.$executeRaw`
      INSERT INTO usage_counters (project_id, month, category, count)
      SELECT id, ${isoDate(billingPeriodOf(occurredAt).start)}::date, ${effect.usage}::"UsageCategory", 1 FROM projects WHERE id = ${projectId}::uuid
      ON CONFLICT (project_id, month, category) DO UPDATE SET count = usage_counters.count + 1`;
  }
  if (effect.daily) {
    const sent = effect.daily === "sent" ? 1 : 0;
    const bounced = effect.daily === "bounced" ? 1 : 0;
    const complained = effect.daily === "complained" ? 1 : 0;
    await tx.$executeRaw`
      INSERT INTO daily_email_stats (project_id, day, sent, bounced, complained)
      SELECT id, ${isoDate(dayOf(occurredAt))}::date, ${sent}, ${bounced}, ${complained} FROM projects WHERE id = ${projectId}::uuid
      ON CONFLICT (project_id, day) DO UPDATE SET
        sent = daily_email_stats.sent + EXCLUDED.sent,
        bounced = daily_email_stats.bounced + EXCLUDED.bounced,
        complained = daily_email_stats.complained + EXCLUDED.complained`;
  }
  if (effect.firstSend) {
    // Events may arrive out of order: keep the earliest send.
    await tx.$executeRaw`
      UPDATE projects SET first_email_sent_at = ${occurredAt}
      WHERE id = ${projectId}::uuid AND (first_email_sent_at IS NULL OR first_email_sent_at > ${occurredAt})`;
  }
}

/** Emails counted per category in the month that contains the instant. */
export async function consumptionOf(db: Reader, projectId: string, instant: Date): Promise<Consumption> {
  const rows = await db.$queryRaw<Array<{ category: string; count: bigint }>>`
    SELECT category::text AS category, count FROM usage_counters
    WHERE project_id = ${projectId}::uuid AND month = ${isoDate(billingPeriodOf(instant).start)}::date`;
  const consumption: Consumption = { transactional: 0n, campaigns: 0n, workflows: 0n, inbound: 0n };
  for (const row of rows) {
    const category = usageCategories.find((name) => name === row.category);
    if (category) consumption[category] = BigInt(row.count);
  }
  return consumption;
}

/** Sent, bounced and complained over the given number of UTC days up to and including today. */
export async function reputationCounts(
  db: Reader,
  projectId: string,
  now: Date,
  days: number,
): Promise<{ sent: bigint; bounced: bigint; complained: bigint }> {
  const since = new Date(dayOf(now).getTime() - (days - 1) * 86_400_000);
  const [row] = await db.$queryRaw<Array<{ sent: bigint | null; bounced: bigint | null; complained: bigint | null }>>`
    SELECT sum(sent)::bigint AS sent, sum(bounced)::bigint AS bounced, sum(complained)::bigint AS complained
    FROM daily_email_stats WHERE project_id = ${projectId}::uuid AND day >= ${isoDate(since)}::date`;
  return { sent: BigInt(row?.sent ?? 0), bounced: BigInt(row?.bounced ?? 0), complained: BigInt(row?.complained ?? 0) };
}

/**
 * What a project reset clears in identity: the onboarding record of its sending,
 * since its emails are wiped. Monthly usage and reputation stay, or a reset would
 * lift billing caps and erase a record of bounces and complaints.
 */
export async function clearSendingActivity(tx: Tx, projectId: string): Promise<void> {
  await tx.project.update({ where: { id: projectId }, data: { firstEmailSentAt: null } });
}
