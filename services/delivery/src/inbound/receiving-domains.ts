import { createLoadingCache } from "@herald/platform";
import type { Db } from "../db/client.js";
import { findReceivingDomains } from "../db/inbound.js";
import type { MailExchangeLookup } from "../verification/mail-exchange.js";

/** Where mail for one recipient domain goes. */
export type ReceivingAnswer =
  /** These projects receive it (most often one). */
  | { kind: "receive"; projectIds: string[] }
  /** No project receives mail for it here: refused for good (5xx). */
  | { kind: "none" }
  /** DNS did not answer whether its MX points here: the sender should try again later (4xx). */
  | { kind: "unknown" };

/** The domain and each parent of it with at least two labels: `a.b.shop.com` → a.b.shop.com, b.shop.com, shop.com. */
export function domainAndParents(domain: string): string[] {
  const labels = domain.toLowerCase().replace(/\.$/, "").split(".");
  const names: string[] = [];
  for (let index = 0; index + 2 <= labels.length; index++) names.push(labels.slice(index).join("."));
  return names;
}

class DnsUnanswered extends Error {}

/**
 * Which projects receive mail for a recipient's domain: those that switched receiving on and have the
 * domain, or the closest parent of it, verified (a verified domain covers its subdomains: its owner proved
 * control of the zone), provided the recipient domain's MX names INBOUND_MX_HOST: mail reaches this
 * listener only where the domain's owner sent it, and a project cannot take over mail its domain routes
 * elsewhere. Two projects that verified the same domain both receive. The MX answer is remembered for
 * `mxCacheMs`; a DNS failure is not.
 */
export function createReceivingDomains(deps: { db: Db; mxHost: string | undefined; lookupMx: MailExchangeLookup; mxCacheMs: number }) {
  const mxHost = deps.mxHost?.toLowerCase();
  const pointsHere = createLoadingCache<string, boolean>({
    max: 10_000,
    ttlMs: Math.max(1, deps.mxCacheMs),
    async load(domain) {
      const answer = await deps.lookupMx(domain);
      if (answer.kind === "dns-error") throw new DnsUnanswered(`the MX of ${domain} did not resolve: ${answer.code}`);
      return answer.kind === "mx" && answer.hosts.some((host) => host.replace(/\.$/, "") === mxHost);
    },
  });

  return {
    async projectsFor(recipientDomain: string): Promise<ReceivingAnswer> {
      if (!mxHost) return { kind: "none" };
      const names = domainAndParents(recipientDomain);
      if (names.length === 0) return { kind: "none" };
      const rows = await findReceivingDomains(deps.db, names);
      // The closest verified domain decides: a subdomain verified by one project is that project's, not its parent's owner's.
      const closest = names.find((name) => rows.some((row) => row.domain === name));
      if (!closest) return { kind: "none" };
      try {
        if (!(await pointsHere.get(names[0] ?? closest))) return { kind: "none" };
      } catch (error) {
        if (error instanceof DnsUnanswered) return { kind: "unknown" };
        throw error;
      }
      return { kind: "receive", projectIds: [...new Set(rows.filter((row) => row.domain === closest).map((row) => row.projectId))] };
    },
  };
}

export type ReceivingDomains = ReturnType<typeof createReceivingDomains>;
