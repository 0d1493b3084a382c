import { createHash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { createLoadingCache } from "@herald/platform";
import { KeyKind } from "@herald/proto/herald/identity/v1/resources_pb";

export interface ResolvedKey {
  projectId: string;
  kind: "secret" | "public";
  disabled: boolean;
}

export interface ApiKeyCache {
  /**
   * The key's project, or undefined for a key identity does not know. `beforeLookup` runs when
   * the key's project is not cached, so that a caller can refuse to spend a lookup.
   */
  resolve(key: string, beforeLookup?: () => Promise<void>): Promise<ResolvedKey | undefined>;
  /** Forgets every key of a project, so that the next request asks identity again. */
  evictProject(projectId: string): void;
}

/** Unknown keys are remembered only briefly: a flood of bad keys must not reach identity, a new key must work soon. */
const unknownKeyTtlMs = 2_000;
/** Keys remembered at most; random keys push out the least recently used, never the map's bound. */
const maxKeys = 50_000;

/**
 * An in-process cache of API key lookups, so that a request costs no RPC for its
 * key. Keys are held by their SHA-256, concurrent misses for one key share one
 * lookup, and entries of a project are dropped when its lifecycle changes.
 */
export function createApiKeyCache(options: {
  lookup: (key: string) => Promise<{ projectId: string; kind: KeyKind; disabled: boolean }>;
  ttlMs: number;
  now?: () => number;
}): ApiKeyCache {
  // Entries are keyed by the key's hash; the key itself reaches the lookup as the load's context.
  const entries = createLoadingCache<string, ResolvedKey | undefined, string>({
    max: maxKeys,
    ttlMs: options.ttlMs,
    ttlOf: (value) => (value ? options.ttlMs : unknownKeyTtlMs),
    now: options.now,
    load: async (_hash, _signal, key) => {
      try {
        const answer = await options.lookup(key);
        return { projectId: answer.projectId, kind: answer.kind === KeyKind.PUBLIC ? "public" : "secret", disabled: answer.disabled };
      } catch (error) {
        if (error instanceof ConnectError && error.code === Code.Unauthenticated) return undefined;
        throw error;
      }
    },
  });

  return {
    async resolve(key, beforeLookup) {
      const hash = createHash("sha256").update(key).digest("hex");
      // A remembered unknown key peeks as undefined too: it is checked like a miss, which costs Redis, not identity.
      if (beforeLookup && entries.peek(hash) === undefined) await beforeLookup();
      return entries.get(hash, key);
    },
    evictProject(projectId) {
      // A lookup under way for one of them is answered but not kept (see createLoadingCache's delete).
      // Unknown-key entries may now be a project's new keys; they expire within seconds anyway.
      entries.deleteWhere((value) => value?.projectId === projectId);
    },
  };
}
