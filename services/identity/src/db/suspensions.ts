import type { Reader, Tx } from "./client.js";
import type { Suspension } from "./generated/client.js";

export type { Suspension };

export async function openSuspension(tx: Tx, projectId: string, reason: string, at: Date): Promise<void> {
  await tx.suspension.create({ data: { projectId, reason, suspendedAt: at } });
}

/** The owner's enabling lifts what the owner opened; a reputation suspension is the operator's to lift. */
export async function liftSuspensions(tx: Tx, projectId: string, at: Date): Promise<void> {
  await tx.suspension.updateMany({ where: { projectId, kind: "owner", liftedAt: null }, data: { liftedAt: at, liftedBy: "owner" } });
}

export const recentSuspensions = (db: Reader, projectId: string, limit = 20): Promise<Suspension[]> =>
  db.suspension.findMany({ where: { projectId }, orderBy: { suspendedAt: "desc" }, take: limit });
