import type { Resolver } from "node:dns/promises";
import { createLoadingCache } from "@herald/platform";
import { createMailExchangeLookup, type MailExchangeAnswer } from "./mail-exchange.js";

/** What DNS says of an address's domain, for POST /v1/verify. */
export interface DomainFacts {
  exchange: MailExchangeAnswer;
  /** The domain has NS, SOA, MX or A records. */
  exists: boolean;
  /** The domain, or `www.` under it, has an A or AAAA record. */
  hasWebsite: boolean;
}

export type DomainFactsLookup = (asciiDomain: string) => Promise<DomainFacts>;

/** Whether a lookup found records: no records, NXDOMAIN, a timeout and any other failure are all "no". */
async function found(lookup: () => Promise<unknown[]>): Promise<boolean> {
  try {
    return (await lookup()).length > 0;
  } catch {
    return false;
  }
}

/** One SOA record, as node answers it (an object, not an array). */
async function hasSoa(resolver: Resolver, domain: string): Promise<boolean> {
  try {
    await resolver.resolveSoa(domain);
    return true;
  } catch {
    return false;
  }
}

const answerTtlMs = 10 * 60_000;
/** A failed lookup is asked again soon: a transient failure must not stick. */
const failureTtlMs = 5_000;

/**
 * The DNS facts of a domain, through the resolver of DNS_SERVERS (its timeout and tries), kept
 * per domain for ten minutes (five seconds when DNS failed), with one lookup however many ask at once.
 */
export function createDomainFactsLookup(resolver: Resolver, options: { max?: number } = {}): DomainFactsLookup {
  const lookupMailExchange = createMailExchangeLookup(resolver);
  const cache = createLoadingCache<string, DomainFacts>({
    max: options.max ?? 10_000,
    ttlMs: answerTtlMs,
    ttlOf: (facts) => (facts.exchange.kind === "dns-error" ? failureTtlMs : answerTtlMs),
    load: async (domain) => {
      const www = `www.${domain}`;
      const [exchange, ns, soa, a, aaaa, wwwA, wwwAaaa] = await Promise.all([
        lookupMailExchange(domain),
        found(() => resolver.resolveNs(domain)),
        hasSoa(resolver, domain),
        found(() => resolver.resolve4(domain)),
        found(() => resolver.resolve6(domain)),
        found(() => resolver.resolve4(www)),
        found(() => resolver.resolve6(www)),
      ]);
      // A null MX is an MX record too: the domain exists, and says it takes no mail.
      const mx = exchange.kind === "mx" || exchange.kind === "null-mx";
      return { exchange, exists: ns || soa || mx || a, hasWebsite: a || aaaa || wwwA || wwwAaaa };
    },
  });
  return (domain) => cache.get(domain);
}
