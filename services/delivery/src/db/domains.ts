import type { RecordStatus } from "../domain/dns-records.js";
import type { Db } from "./client.js";
import { type Domain, Prisma } from "./generated/client.js";

export type DomainRow = Domain;

export interface NewDomain {
  id: string;
  projectId: string;
  domain: string;
  selector: string;
  publicKey: string;
  privateKeyEncrypted: string;
}

export interface CheckResult {
  verified: boolean;
  dkimStatus: RecordStatus;
  spfStatus: RecordStatus;
  dmarcStatus: RecordStatus;
}

export const insertDomain = (db: Db, row: NewDomain): Promise<DomainRow> => db.domain.create({ data: row });

export const findDomain = (db: Db, projectId: string, id: string): Promise<DomainRow | null> =>
  db.domain.findFirst({ where: { projectId, id } });

/** The project's domain of this name if it is verified: the one whose key signs its emails. */
export const findVerifiedDomain = (db: Db, projectId: string, domain: string): Promise<DomainRow | null> =>
  db.domain.findFirst({ where: { projectId, domain, verified: true } });

/** Whether the project has added this domain (lower-case ASCII), verified or not. */
export const hasDomain = async (db: Db, projectId: string, domain: string): Promise<boolean> =>
  (await db.domain.count({ where: { projectId, domain } })) > 0;

export const listDomains = (db: Db, projectId: string): Promise<DomainRow[]> =>
  db.domain.findMany({ where: { projectId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });

export async function deleteDomain(db: Db, projectId: string, id: string): Promise<boolean> {
  return (await db.domain.deleteMany({ where: { projectId, id } })).count > 0;
}

/** Every domain of a project, with its key: in the transaction of the consumer that heard of the deletion. */
export async function deleteProjectDomains(tx: Pick<Db, "domain">, projectId: string): Promise<void> {
  await tx.domain.deleteMany({ where: { projectId } });
}

/**
 * Stores a check's outcome, unless another check claimed the domain after this one did
 * (its checked_at is no longer this check's stamp): that check looked the records up
 * later, so its outcome stands. verifiedAt moves only when the domain becomes verified.
 * Answers the domain as it is now; null when it is gone.
 */
export async function saveCheck(db: Db, domain: DomainRow, result: CheckResult): Promise<DomainRow | null> {
  const now = new Date();
  const becameVerified = result.verified && !domain.verified;
  await db.domain.updateMany({
    where: { id: domain.id, projectId: domain.projectId, checkedAt: domain.checkedAt },
    data: { ...result, updatedAt: now, ...(becameVerified ? { verifiedAt: now } : {}) },
  });
  return findDomain(db, domain.projectId, domain.id);
}

const domainColumns = `id::text AS id, project_id::text AS "projectId", domain, selector, public_key AS "publicKey",
  private_key_encrypted AS "privateKeyEncrypted", verified, dkim_status AS "dkimStatus", spf_status AS "spfStatus",
  dmarc_status AS "dmarcStatus", verified_at AS "verifiedAt", checked_at AS "checkedAt", created_at AS "createdAt",
  updated_at AS "updatedAt"`;

/** Claims one domain for a check asked for now (GET /domains/:id/verify): stamps checked_at, like claimDueDomains. */
export async function claimDomain(db: Db, projectId: string, id: string): Promise<DomainRow | null> {
  const rows = await db.$queryRaw<DomainRow[]>`
    UPDATE domains SET checked_at = now() WHERE id = ${id}::uuid AND project_id = ${projectId}::uuid RETURNING ${Prisma.raw(domainColumns)}`;
  return rows[0] ?? null;
}

/**
 * Claims up to `limit` domains not checked within `intervalMs`, oldest first, by stamping
 * checked_at in one statement: replicas running this together skip each other's rows
 * (SKIP LOCKED) and, once stamped, a domain is not due again for another interval.
 */
export function claimDueDomains(db: Db, intervalMs: number, limit: number): Promise<DomainRow[]> {
  return db.$queryRaw<DomainRow[]>`
    UPDATE domains SET checked_at = now()
    WHERE id IN (
      SELECT id FROM domains
      WHERE checked_at IS NULL OR checked_at <= now() - make_interval(secs => ${intervalMs / 1000}::double precision)
      ORDER BY checked_at NULLS FIRST
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    RETURNING ${Prisma.raw(domainColumns)}`;
}

/** Whether the project has this domain (lower-case ASCII) and it is verified now. */
export async function isVerifiedDomain(db: Db, projectId: string, domain: string): Promise<boolean> {
  return (await db.domain.count({ where: { projectId, domain, verified: true } })) > 0;
}
