import type { Resolver } from "node:dns/promises";

/** How a domain takes mail (RFC 5321 section 5.1, RFC 7505), as DNS answered. */
export type MailExchangeAnswer =
  | { kind: "mx"; hosts: string[] }
  /** No MX records, but address records: the domain itself is its mail server. */
  | { kind: "implicit"; hosts: string[] }
  /** MX 0 "." : the domain says it takes no mail. */
  | { kind: "null-mx" }
  /** The domain exists with neither MX nor address records. */
  | { kind: "none" }
  /** NXDOMAIN. */
  | { kind: "no-domain" }
  /** No answer in time, or an answer that is an error (SERVFAIL, REFUSED...). */
  | { kind: "dns-error"; code: string };

export type MailExchangeLookup = (domain: string) => Promise<MailExchangeAnswer>;

type Outcome<T> = { records: T[] } | { code: string };

async function attempt<T>(lookup: () => Promise<T[]>): Promise<Outcome<T>> {
  try {
    return { records: await lookup() };
  } catch (error) {
    return { code: (error as NodeJS.ErrnoException).code ?? "EUNKNOWN" };
  }
}

/** An empty answer: the name exists, without records of the type asked. */
const empty = <T>(outcome: Outcome<T>) => ("records" in outcome ? outcome.records.length === 0 : outcome.code === "ENODATA");

function failure<T>(outcome: Outcome<T>): MailExchangeAnswer | undefined {
  if ("records" in outcome || outcome.code === "ENODATA") return undefined;
  return outcome.code === "ENOTFOUND" ? { kind: "no-domain" } : { kind: "dns-error", code: outcome.code };
}

/**
 * Where mail to a domain goes: its MX hosts by preference, or else (RFC 5321 section 5.1) the
 * domain itself when it has an A or AAAA record. A single MX whose host is the root is a null
 * MX (RFC 7505): node reports that host as "".
 */
export function createMailExchangeLookup(resolver: Resolver): MailExchangeLookup {
  return async (domain) => {
    const mx = await attempt(() => resolver.resolveMx(domain));
    const mxFailure = failure(mx);
    if (mxFailure) return mxFailure;
    if ("records" in mx && mx.records.length > 0) {
      const hosts = mx.records
        .filter((record) => record.exchange !== "" && record.exchange !== ".")
        .sort((a, b) => a.priority - b.priority)
        .map((record) => record.exchange.toLowerCase());
      return hosts.length === 0 ? { kind: "null-mx" } : { kind: "mx", hosts };
    }
    for (const addresses of [() => resolver.resolve4(domain), () => resolver.resolve6(domain)]) {
      const outcome = await attempt(addresses);
      const addressFailure = failure(outcome);
      if (addressFailure) return addressFailure;
      if (!empty(outcome)) return { kind: "implicit", hosts: [domain] };
    }
    return { kind: "none" };
  };
}
