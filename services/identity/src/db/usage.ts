import { billingPeriodOf, dayOf } from "../domain/billing-period.js";
import type { EmailActivityEffect } from "../domain/email-activity-effect.js";
import { type Consumption, usageCategories } from "../domain/usage-category.js";
import type { Reader, Tx } from "./client.js";

/** 'YYYY-MM-DD' of the UTC day: a bare date, so the database session's time zone cannot shift it. */
const isoDate = (instant: Date): string => instant.toISOString().slice(0, 10);

/** One email-activity event as the counters need it. */
export interface EmailActivityCount {
  projectId: string;
  occurredAt: Date;
  effect: EmailActivityEffect;
}

/**
 * Applies a chunk of email-activity events to the counters, added up first so that a
 * chunk costs at most three statements. Every write selects the project, so events of
 * a deleted project change nothing.
 */
export async function applyEmailActivities(tx: Tx, counts: readonly EmailActivityCount[]): Promise<void> {
  const usage = new Map<string, { projectId: string; month: string; category: string; count: number }>();
  const daily = new Map<string, { projectId: string; day: string; sent: number; bounced: number; complained: number }>();
  const firstSends = new Map<string, Date>();
  for (const { projectId, occurredAt, effect } of counts) {
    if (effect.usage) {
      const month = isoDate(billingPeriodOf(occurredAt).start);
      const key = `${projectId} ${month} ${effect.usage}`;
      const counter = usage.get(key) ?? { projectId, month, category: effect.usage, count: 0 };
      counter.count++;
      usage.set(key, counter);
    }
    if (effect.daily) {
      const day = isoDate(dayOf(occurredAt));
      const key = `${projectId} ${day}`;
      const stats = daily.get(key) ?? { projectId, day, sent: 0, bounced: 0, complained: 0 };
      stats[effect.daily]++;
      if (effect.attempted) stats.sent++;
      daily.set(key, stats);
    }
    if (effect.firstSend) {
      // Events may arrive out of order: keep the earliest send.
      const earliest = firstSends.get(projectId);
      if (!earliest || occurredAt < earliest) firstSends.set(projectId, occurredAt);
    }
  }
  if (usage.size > 0) {
    const rows = [...usage.values()];
    await tx.$executeRaw`
      INSERT INTO usage_counters (project_id, month, category, count)
      SELECT p.id, c.month, c.category::"UsageCategory", c.count
      FROM unnest(${rows.map((row) => row.projectId)}::uuid[], ${rows.map((row) => row.month)}::date[],
                  ${rows.map((row) => row.category)}::text[], ${rows.map((row) => row.count)}::int[]) AS c(project_id, month, category, count)
      JOIN projects p ON p.id = c.project_id
      ON CONFLICT (project_id, month, category) DO UPDATE SET count = usage_counters.count + EXCLUDED.count`;
  }
  if (daily.size > 0) {
    const rows = [...daily.values()];
    await tx.$executeRaw`
      INSERT INTO daily_email_stats (project_id, day, sent, bounced, complained)
      SELECT p.id, d.day, d.sent, d.bounced, d.complained
      FROM unnest(${rows.map((row) => row.projectId)}::uuid[], ${rows.map((row) => row.day)}::date[], ${rows.map((row) => row.sent)}::int[],
                  ${rows.map((row) => row.bounced)}::int[], ${rows.map((row) => row.complained)}::int[]) AS d(project_id, day, sent, bounced, complained)
      JOIN projects p ON p.id = d.project_id
      ON CONFLICT (project_id, day) DO UPDATE SET
        sent = daily_email_stats.sent + EXCLUDED.sent,
        bounced = daily_email_stats.bounced + EXCLUDED.bounced,
        complained = daily_email_stats.complained + EXCLUDED.complained`;
  }
  if (firstSends.size > 0) {
    await tx.$executeRaw`
      UPDATE projects p SET first_email_sent_at = f.sent_at
      FROM unnest(${[...firstSends.keys()]}::uuid[], ${[...firstSends.values()]}::timestamptz[]) AS f(project_id, sent_at)
      WHERE p.id = f.project_id AND (p.first_email_sent_at IS NULL OR p.first_email_sent_at > f.sent_at)`;
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
