import { LRUCache } from "lru-cache";

export interface Cache<K, V> {
  /** The value of key: from memory while it is fresh, otherwise loaded once, however many callers ask meanwhile. */
  get(key: K): Promise<V>;
  /** Forgets key; a load under way for it still answers its callers, but is not kept. */
  delete(key: K): void;
  /** Forgets every entry for which the predicate holds (a scan: for rare events such as a project's keys rotating). */
  deleteWhere(predicate: (value: V, key: K) => boolean): void;
  clear(): void;
  /** Entries held now. */
  readonly size: number;
}

export interface CacheOptions<K, V> {
  /** Entries kept at most; the least recently used go first. */
  max: number;
  /** How long a loaded value is served before it is loaded again. */
  ttlMs: number;
  load: (key: K, signal: AbortSignal) => Promise<V>;
  /** A life of its own for some values, such as a short one for "not found". */
  ttlOf?: (value: V, key: K) => number;
}

/**
 * The one in-process cache of Herald, on lru-cache: a size bound, a time to live, and
 * single-flight loads (concurrent misses of one key share one load). A failed load is
 * not kept: every caller waiting on it gets the error, and the next call loads again.
 * Any value may be cached, undefined and null included ("no such key" is an answer too).
 */
export function createCache<K extends {}, V>(options: CacheOptions<K, V>): Cache<K, V> {
  const lru = new LRUCache<K, { value: V }>({
    max: options.max,
    ttl: options.ttlMs,
    // A delete() during a load must not hand its callers an abort: they get the answer, which is not kept.
    ignoreFetchAbort: true,
    fetchMethod: async (key, _stale, { signal, options: fetchOptions }) => {
      const value = await options.load(key, signal);
      if (options.ttlOf) fetchOptions.ttl = options.ttlOf(value, key);
      return { value };
    },
  });

  return {
    async get(key) {
      const entry = await lru.fetch(key);
      // fetch answers undefined only when the load was abandoned without an answer, which a load that threw is not.
      if (!entry) throw new Error("cache load ended without a value");
      return entry.value;
    },
    delete(key) {
      lru.delete(key);
    },
    deleteWhere(predicate) {
      for (const [key, entry] of lru.entries()) if (predicate(entry.value, key)) lru.delete(key);
    },
    clear() {
      lru.clear();
    },
    get size() {
      return lru.size;
    },
  };
}
