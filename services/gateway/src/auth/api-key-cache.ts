import { createHash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { KeyKind } from "@herald/proto/herald/identity/v1/resources_pb";

export interface ResolvedKey {
  projectId: string;
  kind: "secret" | "public";
  disabled: boolean;
}

export interface ApiKeyCache {
  /** The key's project, or undefined for a key identity does not know. */
  resolve(key: string): Promise<ResolvedKey | undefined>;
  /** Forgets every key of a project, so that the next request asks identity again. */
  evictProject(projectId: string): void;
}

interface Entry {
  value: ResolvedKey | undefined;
  expiresAt: number;
}

/** Unknown keys are remembered only briefly: a flood of bad keys must not reach identity, a new key must work soon. */
const unknownKeyTtlMs = 2_000;
/** Past this many entries, expired ones are swept out, so random keys cannot grow the map without bound. */
const sweepAbove = 50_000;

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
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const byProject = new Map<string, Set<string>>();
  const inFlight = new Map<string, Promise<ResolvedKey | undefined>>();
  // Bumped on every eviction so that a lookup started before it does not store a stale answer.
  let generation = 0;

  function sweep() {
    const at = now();
    for (const [hash, entry] of entries) if (entry.expiresAt <= at) entries.delete(hash);
    if (entries.size > sweepAbove) entries.clear();
  }

  function store(hash: string, value: ResolvedKey | undefined) {
    if (entries.size >= sweepAbove) sweep();
    entries.set(hash, { value, expiresAt: now() + (value ? options.ttlMs : unknownKeyTtlMs) });
    if (!value) return;
    let hashes = byProject.get(value.projectId);
    if (!hashes) {
      hashes = new Set();
      byProject.set(value.projectId, hashes);
    }
    hashes.add(hash);
  }

  async function lookup(key: string, hash: string): Promise<ResolvedKey | undefined> {
    const startedAt = generation;
    let value: ResolvedKey | undefined;
    try {
      const answer = await options.lookup(key);
      value = { projectId: answer.projectId, kind: answer.kind === KeyKind.PUBLIC ? "public" : "secret", disabled: answer.disabled };
    } catch (error) {
      if (!(error instanceof ConnectError && error.code === Code.Unauthenticated)) throw error;
    }
    if (startedAt === generation) store(hash, value);
    return value;
  }

  return {
    async resolve(key) {
      const hash = createHash("sha256").update(key).digest("hex");
      const entry = entries.get(hash);
      if (entry && entry.expiresAt > now()) return entry.value;
      entries.delete(hash);
      let pending = inFlight.get(hash);
      if (!pending) {
        pending = lookup(key, hash).finally(() => inFlight.delete(hash));
        inFlight.set(hash, pending);
      }
      return pending;
    },
    evictProject(projectId) {
      generation++;
      for (const hash of byProject.get(projectId) ?? []) entries.delete(hash);
      byProject.delete(projectId);
      // Unknown-key entries may now be a project's new keys; they expire within seconds anyway.
    },
  };
}
