import { createLoadingCache } from "@herald/platform";
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
 * The emails of one domain claimed together load its key once.
 */
export function createSigningKeyLookup(options: SigningKeysOptions): SigningKeyLookup {
  const keys = createLoadingCache<string, DkimSigningKey | null, { projectId: string; domain: string }>({
    max: 10_000,
    ttlMs: options.ttlMs,
    load: async (_key, _signal, { projectId, domain }) => {
      const row = await findVerifiedDomain(options.db, projectId, domain);
      if (!row) return null;
      return {
        domainName: row.domain,
        keySelector: row.selector,
        privateKey: decryptPrivateKey(options.encryptionKey, row.privateKeyEncrypted, row.id),
      };
    },
  });
  return (projectId, domain) => keys.get(`${projectId} ${domain}`, { projectId, domain });
}
