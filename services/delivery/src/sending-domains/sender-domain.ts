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

/** How long a verified sender domain is trusted without asking the database again. */
const verifiedTtlMs = 30_000;

/**
 * requireVerifiedSenderDomain for the per-request path (/v1/send), remembering verified
 * domains for 30 seconds: a domain that stops being verified is still accepted for that
 * long, and its emails then end FAILED when the dispatcher, which checks again, sends them.
 * An unverified domain is never remembered (its refusal is a failed load, which the cache
 * does not keep), so verifying one takes effect at once.
 */
export function createVerifiedSenderCache(db: Db) {
  const verified = createLoadingCache<string, true, { projectId: string; domain: string }>({
    max: 10_000,
    ttlMs: verifiedTtlMs,
    load: async (_key, _signal, { projectId, domain }) => {
      await requireVerifiedSenderDomain(db, projectId, domain);
      return true;
    },
  });
  return {
    async require(projectId: string, domain: string): Promise<void> {
      await verified.get(`${projectId} ${domain}`, { projectId, domain });
    },
  };
}
