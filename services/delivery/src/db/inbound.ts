import type { Db } from "./client.js";

export async function findReceiveInbound(db: Db, projectId: string): Promise<boolean> {
  const row = await db.projectSettings.findUnique({ where: { projectId }, select: { receiveInbound: true } });
  return row?.receiveInbound ?? false;
}

export async function saveReceiveInbound(db: Db, projectId: string, enabled: boolean): Promise<void> {
  await db.projectSettings.upsert({
    where: { projectId },
    create: { projectId, receiveInbound: enabled },
    update: { receiveInbound: enabled, updatedAt: new Date() },
  });
}

/**
 * The projects that receive mail for one of these domain names: each project's verified domain among them
 * whose project switched receiving on. Across projects: the inbound listener does not know the project yet.
 */
export function findReceivingDomains(db: Db, names: readonly string[]): Promise<Array<{ projectId: string; domain: string }>> {
  return db.$queryRaw<Array<{ projectId: string; domain: string }>>`
    SELECT d.project_id::text AS "projectId", d.domain
    FROM domains d JOIN project_settings s ON s.project_id = d.project_id
    WHERE d.domain = ANY(${[...names]}::text[]) AND d.verified AND s.receive_inbound`;
}

/** Which of these ids are emails of the project (In-Reply-To of a received message names one of ours). */
export async function projectEmailAmong(db: Db, projectId: string, ids: readonly string[]): Promise<string | undefined> {
  if (ids.length === 0) return undefined;
  const rows = await db.$queryRaw<Array<{ id: string }>>`
    SELECT id::text AS id FROM emails WHERE project_id = ${projectId}::uuid AND id = ANY(${[...ids]}::uuid[])`;
  const found = new Set(rows.map((row) => row.id));
  return ids.find((id) => found.has(id));
}
