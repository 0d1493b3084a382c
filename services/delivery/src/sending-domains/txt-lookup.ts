import { Resolver } from "node:dns/promises";
import type { TxtAnswer } from "../domain/dns-records.js";

export type TxtLookup = (name: string) => Promise<TxtAnswer>;

/** The name exists without TXT records, or does not exist: nothing is published there. */
const nothingThere = new Set(["ENODATA", "ENOTFOUND"]);

/**
 * TXT lookups through DNS_SERVERS (the system's resolvers when empty), each attempt
 * bounded by timeoutMs. A record's strings are joined, as DKIM and SPF read them.
 */
export interface ResolverOptions {
  /** DNS_SERVERS: `host:port` entries; the system's resolvers when empty. */
  servers: string[];
  timeoutMs: number;
  tries: number;
}

/** A resolver of DNS_SERVERS, each attempt bounded: every lookup of delivery goes through one. */
export function createResolver(options: ResolverOptions): Resolver {
  const resolver = new Resolver({ timeout: options.timeoutMs, tries: options.tries });
  if (options.servers.length > 0) resolver.setServers(options.servers);
  return resolver;
}

export function createTxtLookup(resolver: Resolver): TxtLookup {
  return async (name) => {
    try {
      const records = await resolver.resolveTxt(name);
      return records.length === 0 ? { kind: "none" } : { kind: "records", records: records.map((chunks) => chunks.join("")) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "EUNKNOWN";
      return nothingThere.has(code) ? { kind: "none" } : { kind: "error", code };
    }
  };
}
