import { LRUCache } from "lru-cache";

export interface Cache<K, V> {
  /** The value kept for key while it is fresh; undefined when there is none. */
  peek(key: K): V | undefined;
  set(key: K, value: V): void;
  /** Forgets key; a load under way for it still answers its callers, but is not kept. */
  delete(key: K): void;
  /** Forgets every entry for which the predicate holds (a scan: for rare events such as a project's keys rotating). */
  deleteWhere(predicate: (value: V, key: K) => boolean): void;
  clear(): void;
  /** Entries held now. */
  readonly size: number;
}

export interface LoadingCache<K, V, C = undefined> extends Cache<K, V> {
  /**
   * The value of key: from memory while it is fresh, otherwise loaded once, however many
   * callers ask meanwhile. The context reaches the load that this call starts, if it starts one.
   */
  get(key: K, ...context: C extends undefined ? [] : [C]): Promise<V>;
}

export interface CacheOptions<K, V> {
  /** Entries kept at most; the least recently used go first. */
  max: number;
  /** How long a value is served before it is forgotten (or loaded again). */
  ttlMs: number;
  /** A life of its own for some values, such as a short one for "not found". */
  ttlOf?: (value: V, key: K) => number;
  /** The clock, in milliseconds, for tests. */
  now?: () => number;
}

/**
 * The one in-process cache of Herald, on lru-cache: a size bound (least recently used
 * out first) and a time to live. Any value may be kept, undefined and null included.
 */
export function createCache<K extends {}, V>(options: CacheOptions<K, V>): Cache<K, V> {
  return wrap(lruOf(options), options);
}

/**
 * A cache that loads what it lacks, with single-flight loads: concurrent misses of one
 * key share one load. A failed load is not kept: every caller waiting on it gets the
 * error, and the next call loads again. "Not found" (undefined) is an answer that is kept.
 */
export function createLoadingCache<K extends {}, V, C = undefined>(
  options: CacheOptions<K, V> & { load: (key: K, signal: AbortSignal, context: C) => Promise<V> },
): LoadingCache<K, V, C> {
  const lru = lruOf<K, V>(options, async (key, _stale, { signal, options: fetchOptions, context }) => {
    const value = await options.load(key, signal, context as C);
    if (options.ttlOf) fetchOptions.ttl = options.ttlOf(value, key);
    return { value };
  });
  const cache = wrap(lru, options);
  return Object.defineProperties(cache as LoadingCache<K, V, C>, {
    get: {
      value: async (key: K, context?: C): Promise<V> => {
        const entry = await lru.fetch(key, { context });
        // fetch answers undefined only for a load abandoned without an answer, which a load that threw is not.
        if (!entry) throw new Error("cache load ended without a value");
        return entry.value;
      },
    },
  });
}

type Box<V> = { value: V };

function lruOf<K extends {}, V>(
  options: CacheOptions<K, V>,
  fetchMethod?: LRUCache.Fetcher<K, Box<V>, unknown>,
): LRUCache<K, Box<V>, unknown> {
  const now = options.now;
  return new LRUCache<K, Box<V>, unknown>({
    max: options.max,
    ttl: options.ttlMs,
    // Read the clock at every check rather than once a millisecond, so that an injected clock is obeyed at once.
    ttlResolution: 0,
    // lru-cache reads a start time of 0 as "no start time": an injected clock that starts at 0 is shifted by one.
    ...(now ? { perf: { now: () => now() + 1 } } : {}),
    // A delete() during a load must not hand its callers an abort: they get the answer, which is not kept.
    ignoreFetchAbort: true,
    ...(fetchMethod ? { fetchMethod } : {}),
  });
}

function wrap<K extends {}, V>(lru: LRUCache<K, Box<V>, unknown>, options: CacheOptions<K, V>): Cache<K, V> {
  return {
    peek: (key) => lru.get(key)?.value,
    set: (key, value) => {
      lru.set(key, { value }, options.ttlOf ? { ttl: options.ttlOf(value, key) } : undefined);
    },
    delete: (key) => {
      lru.delete(key);
    },
    deleteWhere(predicate) {
      for (const [key, entry] of lru.entries()) if (predicate(entry.value, key)) lru.delete(key);
    },
    clear: () => lru.clear(),
    get size() {
      return lru.size;
    },
  };
}
