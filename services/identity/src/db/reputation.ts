import { dayOf } from "../domain/billing-period.js";
import type { GuardRates, WindowCounts } from "../domain/reputation-guard.js";
import type { Reader, Tx } from "./client.js";
import type { ReputationWarning } from "./generated/client.js";

export type { ReputationWarning };

const isoDate = (instant: Date): string => instant.toISOString().slice(0, 10);

/** The first UTC day of a window of `days` days that ends today. */
export const windowStartOf = (now: Date, days: number): Date => new Date(dayOf(now).getTime() - (days - 1) * 86_400_000);

/** A project's counts over the guard's window, and what the guard knows of it. */
export interface GuardStanding extends WindowCounts {
  projectId: string;
  disabled: boolean;
  suspendedReason: string | null;
  /** When the operator last re-enabled it: warnings before it are of a judged episode. */
  reputationSince: Date | null;
  lastWarnedAt: Date | null;
}

/**
 * The window's counts of these projects from daily_email_stats (at most `days` rows each, never the emails): only
 * the days since each project was last re-enabled, less the counts that day had then, so that a re-enabled
 * project is judged on what it sent afterwards.
 */
export async function guardStandings(db: Reader, projectIds: readonly string[], now: Date, days: number): Promise<GuardStanding[]> {
  if (projectIds.length === 0) return [];
  const since = isoDate(windowStartOf(now, days));
  const rows = await db.$queryRaw<
    Array<Omit<GuardStanding, "sent" | "bounced" | "complained"> & { sent: bigint; bounced: bigint; complained: bigint }>
  >`
    SELECT p.id::text AS "projectId", p.disabled, p.suspended_reason AS "suspendedReason", b.since AS "reputationSince",
      (SELECT max(w.warned_at) FROM reputation_warnings w WHERE w.project_id = p.id) AS "lastWarnedAt",
      greatest(coalesce(sum(d.sent), 0) - CASE WHEN b.in_window THEN b.sent ELSE 0 END, 0)::bigint AS sent,
      greatest(coalesce(sum(d.bounced), 0) - CASE WHEN b.in_window THEN b.bounced ELSE 0 END, 0)::bigint AS bounced,
      greatest(coalesce(sum(d.complained), 0) - CASE WHEN b.in_window THEN b.complained ELSE 0 END, 0)::bigint AS complained
    FROM projects p
    LEFT JOIN LATERAL (
      SELECT r.since, r.sent, r.bounced, r.complained, (r.since AT TIME ZONE 'UTC')::date >= ${since}::date AS in_window
      FROM reputation_baselines r WHERE r.project_id = p.id
    ) b ON true
    LEFT JOIN daily_email_stats d ON d.project_id = p.id
      AND d.day >= greatest(${since}::date, coalesce((b.since AT TIME ZONE 'UTC')::date, ${since}::date))
    WHERE p.id = ANY(${[...projectIds]}::uuid[])
    GROUP BY p.id, b.since, b.sent, b.bounced, b.complained, b.in_window`;
  return rows.map((row) => ({ ...row, sent: BigInt(row.sent), bounced: BigInt(row.bounced), complained: BigInt(row.complained) }));
}

/** Suspends the project unless it is already: false when it was (another chunk or replica was first). */
export async function suspendForReputation(tx: Tx, projectId: string, reason: string, rates: GuardRates, at: Date): Promise<boolean> {
  const changed = await tx.$executeRaw`
    UPDATE projects SET suspended_reason = ${reason}, updated_at = ${at} WHERE id = ${projectId}::uuid AND suspended_reason IS NULL`;
  if (changed === 0) return false;
  await tx.suspension.create({
    data: { projectId, reason, kind: "reputation", bounceRate: rates.bounceRate, complaintRate: rates.complaintRate, suspendedAt: at },
  });
  return true;
}

/**
 * Records a warning unless one was given since `since` (the window's start, or the last re-enabling when later):
 * false when one was. The project's row is locked first, so that two replicas do not both warn.
 */
export async function recordWarning(
  tx: Tx,
  projectId: string,
  warning: { reason: string; rates: GuardRates; at: Date; since: Date },
): Promise<boolean> {
  await tx.$executeRaw`SELECT 1 FROM projects WHERE id = ${projectId}::uuid FOR UPDATE`;
  const earlier = await tx.reputationWarning.findFirst({ where: { projectId, warnedAt: { gte: warning.since } }, select: { id: true } });
  if (earlier) return false;
  await tx.reputationWarning.create({
    data: {
      projectId,
      reason: warning.reason,
      bounceRate: warning.rates.bounceRate,
      complaintRate: warning.rates.complaintRate,
      warnedAt: warning.at,
    },
  });
  return true;
}

/** The warning the dashboard's banner shows: the last one since `since`. */
export const currentWarning = (db: Reader, projectId: string, since: Date): Promise<ReputationWarning | null> =>
  db.reputationWarning.findFirst({ where: { projectId, warnedAt: { gte: since } }, orderBy: { warnedAt: "desc" } });

/**
 * The operator's re-enabling: clears the suspension, closes it in the history, and starts the project's
 * judged record afresh from now (today's counts so far become the baseline). Null when it was not suspended.
 */
export async function liftReputationSuspension(
  tx: Tx,
  projectId: string,
  note: string,
  at: Date,
): Promise<{ disabled: boolean; suspendedReason: null } | null> {
  const [project] = await tx.$queryRaw<Array<{ disabled: boolean; suspendedReason: string | null }>>`
    SELECT disabled, suspended_reason AS "suspendedReason" FROM projects WHERE id = ${projectId}::uuid FOR UPDATE`;
  if (!project || project.suspendedReason === null) return null;
  const [today] = await tx.$queryRaw<Array<{ sent: bigint; bounced: bigint; complained: bigint }>>`
    SELECT sent, bounced, complained FROM daily_email_stats WHERE project_id = ${projectId}::uuid AND day = ${isoDate(at)}::date`;
  await tx.project.update({ where: { id: projectId }, data: { suspendedReason: null } });
  const base = { since: at, sent: today?.sent ?? 0n, bounced: today?.bounced ?? 0n, complained: today?.complained ?? 0n };
  await tx.reputationBaseline.upsert({ where: { projectId }, create: { projectId, ...base }, update: base });
  await tx.suspension.updateMany({
    where: { projectId, kind: "reputation", liftedAt: null },
    data: { liftedAt: at, liftedBy: "operator", liftNote: note || null },
  });
  return { disabled: project.disabled, suspendedReason: null };
}

/** Where the guard's emails go: the project's owners and admins. */
export async function ownersAndAdmins(db: Reader, projectId: string): Promise<string[]> {
  const members = await db.projectMember.findMany({
    where: { projectId, role: { in: ["OWNER", "ADMIN"] } },
    select: { user: { select: { email: true } } },
  });
  return members.map((member) => member.user.email);
}
