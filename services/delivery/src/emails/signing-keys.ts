import { createCache } from "@herald/platform";
import type pg from "pg";
import { domainOfAddress } from "../domain/email-input.js";
import type { DkimSigningKey } from "../providers/mail-provider.js";
import { decryptPrivateKey } from "../sending-domains/dkim-keys.js";

/** Where a claimed email's key is looked up: its project and the domain of its From address. */
export const signingKeyOf = (keys: ReadonlyMap<string, DkimSigningKey>, row: { projectId: string; fromEmail: string }) =>
  keys.get(`${row.projectId} ${domainOfAddress(row.fromEmail)}`);

/**
 * The dispatcher's DKIM keys, read from the database for every batch of claimed emails (one
 * statement for the batch): a key is used only if its domain exists and is verified right
 * after the claim, so a deleted or unverified domain's key signs nothing claimed after the
 * change committed. What is remembered is only the work of opening a key, by domain id and
 * selector: a domain's key never changes, and a deleted domain's id never comes back.
 */
export function createSigningKeys(options: { pool: pg.Pool; encryptionKey: Buffer }) {
  const opened = createCache<string, string>({ max: 10_000, ttlMs: 60 * 60_000 });

  /** The keys of the emails' domains that are verified now, by `<project id> <domain>`; a missing one is not verified. */
  return async function signingKeysOf(rows: ReadonlyArray<{ projectId: string; fromEmail: string }>): Promise<Map<string, DkimSigningKey>> {
    const pairs = new Map<string, { projectId: string; domain: string }>();
    for (const row of rows) {
      const domain = domainOfAddress(row.fromEmail);
      pairs.set(`${row.projectId} ${domain}`, { projectId: row.projectId, domain });
    }
    const keys = new Map<string, DkimSigningKey>();
    if (pairs.size === 0) return keys;
    const { rows: found } = await options.pool.query<{
      id: string;
      projectId: string;
      domain: string;
      selector: string;
      privateKeyEncrypted: string;
    }>({
      name: "delivery_signing_keys",
      text: `SELECT d.id::text AS id, d.project_id::text AS "projectId", d.domain, d.selector, d.private_key_encrypted AS "privateKeyEncrypted"
       FROM domains d JOIN unnest($1::uuid[], $2::text[]) AS w(project_id, domain) ON d.project_id = w.project_id AND d.domain = w.domain
       WHERE d.verified`,
      values: [[...pairs.values()].map((pair) => pair.projectId), [...pairs.values()].map((pair) => pair.domain)],
    });
    for (const row of found) {
      const cacheKey = `${row.id} ${row.selector}`;
      let privateKey = opened.peek(cacheKey);
      if (privateKey === undefined) {
        privateKey = decryptPrivateKey(options.encryptionKey, row.privateKeyEncrypted, row.id);
        opened.set(cacheKey, privateKey);
      }
      keys.set(`${row.projectId} ${row.domain}`, { domainName: row.domain, keySelector: row.selector, privateKey });
    }
    return keys;
  };
}
