import type { Db } from "../db/client.js";
import { findVerifiedDomain } from "../db/domains.js";
import type { DkimSigningKey } from "../providers/mail-provider.js";
import { decryptPrivateKey } from "../sending-domains/dkim-keys.js";

export interface SigningKeysOptions {
  db: Db;
  /** Opens the domains' DKIM keys (DKIM_ENCRYPTION_KEY). */
  encryptionKey: Buffer;
  /** How long a sending domain's key (or its absence) is remembered. */
  ttlMs: number;
}

/** Answers the project's verified domain's key for a sender's domain, or null when there is none. */
export type SigningKeyLookup = (projectId: string, domain: string) => Promise<DkimSigningKey | null>;

/**
 * The dispatcher's DKIM keys, remembered for `ttlMs` so that a send does not read and decrypt its
 * domain's key every time; a domain verified or removed meanwhile is seen once that time is up.
 */
export function createSigningKeyLookup(options: SigningKeysOptions): SigningKeyLookup {
  const keys = new Map<string, { expiresAt: number; key: DkimSigningKey | null }>();
  return async (projectId, domain) => {
    const cacheKey = `${projectId} ${domain}`;
    const cached = keys.get(cacheKey);
    if (cached && cached.expiresAt > Date.now()) return cached.key;
    const row = await findVerifiedDomain(options.db, projectId, domain);
    const key = row
      ? {
          domainName: row.domain,
          keySelector: row.selector,
          privateKey: decryptPrivateKey(options.encryptionKey, row.privateKeyEncrypted, row.id),
        }
      : null;
    if (keys.size > 10_000) keys.clear();
    keys.set(cacheKey, { expiresAt: Date.now() + options.ttlMs, key });
    return key;
  };
}
