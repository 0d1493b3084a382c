import { createLoadingCache } from "@herald/platform";
import { type DestinationLimits, type DestinationTable, destinationBackoffMs, destinationOf } from "../domain/destinations.js";
import { createTokenBucket, type TokenBucket } from "../domain/token-bucket.js";
import type { MailExchangeLookup } from "../verification/mail-exchange.js";

/** A destination as the dispatcher holds it while sending to it. */
export interface Destination {
  readonly name: string;
}

/** One destination's state, for the metrics. */
export interface DestinationState {
  name: string;
  inFlight: number;
  /** Seconds until its backoff ends; 0 when it is not backed off. */
  backoffSeconds: number;
}

export interface Destinations {
  /** The destination of a recipient address, its MX looked up through the cache. Never throws. */
  of(address: string): Promise<Destination>;
  /** Takes a send slot and a token of the destination; or answers how long to hold the email back (at least 10 ms). */
  acquire(destination: Destination): { ok: true } | { ok: false; waitMs: number };
  /** Gives the slot back once the send is answered; `deferred`: the destination refused it for now (4xx). */
  release(destination: Destination, deferred: boolean): void;
  /** The destinations this dispatcher knows now, for the metrics. */
  states(): DestinationState[];
}

interface Entry {
  name: string;
  limits: DestinationLimits;
  bucket: TokenBucket;
  inFlight: number;
  backoffUntil: number;
  consecutive: number;
}

/**
 * The dispatcher's destinations (domain/destinations.ts): each recipient domain's MX, looked up through the
 * resolvers of DNS_SERVERS and cached for `mxCacheMs` (a failed lookup for a tenth of that, and the domain is
 * then its own destination), and each destination's send slots, token bucket and backoff.
 */
export function createDestinations(options: {
  table: DestinationTable;
  lookupMx: MailExchangeLookup;
  /** The first backoff after a temporary refusal; doubled for each further one in a row, up to 16 times. */
  backoffMs: number;
  mxCacheMs: number;
  /** An email was held back: the destination was at its limits (`limit`) or backed off (`backoff`). */
  onHeld?: (destination: string, why: "limit" | "backoff") => void;
  /** The destination refused a send for now (4xx), and is backed off. */
  onDeferred?: (destination: string) => void;
  now?: () => number;
}): Destinations {
  const now = options.now ?? (() => Date.now());
  const mxOf = createLoadingCache<string, readonly string[]>({
    max: 50_000,
    ttlMs: options.mxCacheMs,
    ttlOf: (hosts) => (hosts.length === 0 ? Math.max(1, Math.floor(options.mxCacheMs / 10)) : options.mxCacheMs),
    load: async (domain) => {
      const found = await options.lookupMx(domain).catch(() => undefined);
      return found && (found.kind === "mx" || found.kind === "implicit") ? found.hosts : [];
    },
  });
  const entries = new Map<string, Entry>();
  let releases = 0;

  function entryOf(name: string, limits: DestinationLimits): Entry {
    let entry = entries.get(name);
    if (!entry) {
      entry = {
        name,
        limits,
        bucket: createTokenBucket({
          ratePerSecond: limits.ratePerSecond,
          burst: Math.max(1, Math.min(limits.ratePerSecond, limits.concurrency)),
        }),
        inFlight: 0,
        backoffUntil: 0,
        consecutive: 0,
      };
      entries.set(name, entry);
    }
    return entry;
  }

  /** Now and then forget the quiet destinations of MX hosts no group names: the map stays as small as the set in use. */
  function prune(): void {
    if (++releases % 10_000 !== 0) return;
    const current = now();
    for (const [name, entry] of entries) {
      if (entry.inFlight === 0 && entry.backoffUntil <= current && !(name in options.table.groups)) entries.delete(name);
    }
  }

  return {
    async of(address) {
      const domain = address.slice(address.lastIndexOf("@") + 1).toLowerCase();
      const hosts = await mxOf.get(domain).catch(() => []);
      const { name, limits } = destinationOf(options.table, domain, hosts);
      return entryOf(name, limits);
    },
    acquire(destination) {
      const entry = entries.get(destination.name) ?? entryOf(destination.name, options.table.default);
      const waitMs = entry.backoffUntil - now();
      if (waitMs > 0) {
        options.onHeld?.(entry.name, "backoff");
        return { ok: false, waitMs };
      }
      // At its concurrency: one of its sends is likely to finish within a tenth of a second.
      const limited = entry.inFlight >= entry.limits.concurrency ? 100 : entry.bucket.take(1) === 0 ? entry.bucket.msUntilNext() : 0;
      if (limited > 0) {
        options.onHeld?.(entry.name, "limit");
        return { ok: false, waitMs: Math.max(limited, 10) };
      }
      entry.inFlight++;
      return { ok: true };
    },
    release(destination, deferred) {
      const entry = entries.get(destination.name);
      if (!entry) return;
      entry.inFlight = Math.max(0, entry.inFlight - 1);
      if (deferred) {
        options.onDeferred?.(entry.name);
        entry.consecutive++;
        entry.backoffUntil = Math.max(entry.backoffUntil, now() + destinationBackoffMs(options.backoffMs, entry.consecutive));
      } else {
        entry.consecutive = 0;
      }
      prune();
    },
    states() {
      const current = now();
      return [...entries.values()].map((entry) => ({
        name: entry.name,
        inFlight: entry.inFlight,
        backoffSeconds: Math.max(0, entry.backoffUntil - current) / 1000,
      }));
    },
  };
}
