import { DomainError } from "@herald/errors";
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
