/**
 * A token bucket: `ratePerSecond` tokens a second, at most `burst` saved up. Takes are
 * immediate or refused (never queued), so a caller decides what to do when it is empty:
 * the dispatcher claims only as many emails as the global bucket grants, and puts back
 * the emails of a project whose own bucket is empty.
 */
export interface TokenBucket {
  /** Takes up to `count` tokens now; answers how many it took. */
  take(count: number): number;
  /** Gives back tokens taken but not used (never above the burst). */
  refund(count: number): void;
  /** Milliseconds until one token is available (0 when one is). */
  msUntilNext(): number;
}

export function createTokenBucket(options: { ratePerSecond: number; burst?: number; now?: () => number }): TokenBucket {
  const now = options.now ?? (() => performance.now());
  const rate = options.ratePerSecond / 1000;
  const burst = Math.max(1, options.burst ?? options.ratePerSecond);
  let tokens = burst;
  let at = now();

  function refill(): void {
    const current = now();
    tokens = Math.min(burst, tokens + (current - at) * rate);
    at = current;
  }

  return {
    take(count) {
      refill();
      const taken = Math.max(0, Math.min(Math.floor(tokens), Math.floor(count)));
      tokens -= taken;
      return taken;
    },
    refund(count) {
      refill();
      tokens = Math.min(burst, tokens + Math.max(0, count));
    },
    msUntilNext() {
      refill();
      return tokens >= 1 ? 0 : Math.ceil((1 - tokens) / rate);
    },
  };
}

/** One bucket per key (a project), made on first use; buckets that are full again are forgotten. */
export function createKeyedTokenBuckets(options: { ratePerSecond: number; burst?: number; now?: () => number }) {
  const buckets = new Map<string, TokenBucket>();
  let takes = 0;
  return {
    bucket(key: string): TokenBucket {
      // Now and then drop buckets that would be full anyway: the map stays as small as the set of busy projects.
      if (++takes % 10_000 === 0) {
        const burst = Math.max(1, options.burst ?? options.ratePerSecond);
        for (const [name, candidate] of buckets) {
          if (candidate.take(burst) === burst) buckets.delete(name);
          else candidate.refund(burst);
        }
      }
      let bucket = buckets.get(key);
      if (!bucket) {
        bucket = createTokenBucket(options);
        buckets.set(key, bucket);
      }
      return bucket;
    },
  };
}
