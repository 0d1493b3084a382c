import { DomainError } from "@herald/errors";
import { createLoadingCache } from "@herald/platform";
import type { Db } from "../db/client.js";
import { isVerifiedDomain } from "../db/domains.js";

/** SPEC.md: email goes out only from a domain verified for the project (templates, /v1/send, campaigns). */
export async function requireVerifiedSenderDomain(db: Db, projectId: string, domain: string): Promise<void> {
  if (await isVerifiedDomain(db, projectId, domain)) return;
  throw new DomainError("permission-denied", "DOMAIN_NOT_VERIFIED", `The sender domain ${domain} is not verified for this project`, {
    details: { domain },
    suggestion: "Add the domain under /domains, publish its DKIM record and verify it",
  });
}

export type VerifiedSenderCache = ReturnType<typeof createVerifiedSenderCache>;

/**
 * requireVerifiedSenderDomain for the per-request path (/v1/send), remembering verified
 * domains. A domain that stops being verified (deleted, or failing its check) is forgotten
 * at once by the replica that made the change (`forget`), and by every other replica when
 * PostgreSQL's notification of the change reaches it (createSenderDomainListener), within
 * milliseconds. The cache is trusted only while that listener is connected: without it
 * every send asks the database. The time to live only bounds a notification lost
 * on a connection that died unnoticed (SENDER_DOMAIN_CACHE_TTL_MS). An unverified domain is never remembered (its
 * refusal is a failed load, which the cache does not keep), so verifying one takes effect
 * at once.
 */
export function createVerifiedSenderCache(db: Db, ttlMs = 10_000) {
  const verified = createLoadingCache<string, true, { projectId: string; domain: string }>({
    max: 10_000,
    ttlMs,
    load: async (_key, _signal, { projectId, domain }) => {
      await requireVerifiedSenderDomain(db, projectId, domain);
      return true;
    },
  });
  let trusted = false;
  return {
    async require(projectId: string, domain: string): Promise<void> {
      if (!trusted) return requireVerifiedSenderDomain(db, projectId, domain);
      await verified.get(`${projectId} ${domain}`, { projectId, domain });
    },
    /** The domain was deleted or failed its check: refuse it from now on. */
    forget(projectId: string, domain: string): void {
      verified.delete(`${projectId} ${domain}`);
    },
    /**
     * Whether changes reach this replica (the listener is connected). Either way the cache starts
     * empty: what it held may have changed while nothing was listening.
     */
    trust(listening: boolean): void {
      trusted = listening;
      verified.clear();
    },
  };
}
