import type { Logger } from "@herald/platform";
import { queueAuthEmail } from "../db/auth-emails.js";
import type { Tx } from "../db/client.js";
import { guardStandings, ownersAndAdmins, recordWarning, suspendForReputation, windowStartOf } from "../db/reputation.js";
import { type AuthEmailContent, reputationSuspensionEmail, reputationWarningEmail } from "../domain/auth-email-content.js";
import { judgeReputation, type ReputationThresholds } from "../domain/reputation-guard.js";
import { recordProjectEvent } from "../events/project-lifecycle.js";

/** How long the guard's emails may wait for delivery before they are given up: they carry no link that expires. */
const noticeLifetimeMs = 7 * 86_400_000;

export type ReputationGuard = (tx: Tx, projectIds: readonly string[]) => Promise<void>;

/**
 * The reputation guard, run by the email-activity consumer in the transaction that applied a chunk, for the
 * projects whose counts it changed: their window comes from daily_email_stats (a few rows each). Past a
 * suspension threshold the project is suspended once (its history, project.suspended for the other services,
 * an email to its owners and admins); past a warning threshold it is warned once per window.
 */
export function createReputationGuard(deps: {
  thresholds: ReputationThresholds;
  publicUrl: string;
  logger: Logger;
  now?: () => Date;
}): ReputationGuard {
  const { thresholds, logger } = deps;
  const now = deps.now ?? (() => new Date());

  async function notify(tx: Tx, projectId: string, content: (project: { id: string; name: string }) => AuthEmailContent, at: Date) {
    const project = await tx.project.findUnique({ where: { id: projectId }, select: { id: true, name: true } });
    if (!project) return;
    for (const to of await ownersAndAdmins(tx, projectId)) {
      await queueAuthEmail(tx, to, content(project), { expiresAt: new Date(at.getTime() + noticeLifetimeMs) });
    }
  }

  return async (tx, projectIds) => {
    const at = now();
    for (const standing of await guardStandings(tx, projectIds, at, thresholds.windowDays)) {
      if (standing.suspendedReason !== null) continue;
      const verdict = judgeReputation(standing, thresholds);
      if (verdict.level === "ok") continue;
      const { projectId } = standing;
      if (verdict.level === "suspend") {
        if (!(await suspendForReputation(tx, projectId, verdict.reason, verdict.rates, at))) continue;
        // Every service hears of the suspension, delivery's held queue included; a project its owner disabled is
        // announced disabled again right after, since that state wins where the services stop work (campaigns, workflows).
        await recordProjectEvent(tx, "project.suspended", projectId, "", verdict.reason);
        if (standing.disabled) await recordProjectEvent(tx, "project.disabled", projectId, "");
        await notify(tx, projectId, (project) => reputationSuspensionEmail(deps.publicUrl, project, verdict.reason), at);
        logger.warn({ projectId, ...verdict.rates, reason: verdict.reason }, "project suspended by the reputation guard");
        continue;
      }
      const windowStart = windowStartOf(at, thresholds.windowDays);
      const since = standing.reputationSince && standing.reputationSince > windowStart ? standing.reputationSince : windowStart;
      if (standing.lastWarnedAt && standing.lastWarnedAt >= since) continue;
      if (!(await recordWarning(tx, projectId, { reason: verdict.reason, rates: verdict.rates, at, since }))) continue;
      await notify(tx, projectId, (project) => reputationWarningEmail(deps.publicUrl, project, verdict.reason), at);
      logger.info({ projectId, ...verdict.rates, reason: verdict.reason }, "project warned by the reputation guard");
    }
  };
}
