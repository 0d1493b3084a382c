import { createHash } from "node:crypto";

export interface SessionFacts {
  userId: string;
  /** Present when the session was checked against a project. */
  role?: number;
}

/**
 * Remembers verified sessions for a few seconds, so that a dashboard page that fires
 * many requests asks identity once. Logout on this replica forgets the session at
 * once; other replicas trust it at most for the TTL.
 */
export function createSessionCache(ttlMs: number, now: () => number = Date.now) {
  const entries = new Map<string, { facts: SessionFacts; expiresAt: number; tokenHash: string }>();
  const hashOf = (token: string) => createHash("sha256").update(token).digest("hex");
  const keyOf = (token: string, projectId: string) => `${hashOf(token)}:${projectId}`;
  return {
    get(token: string, projectId: string): SessionFacts | undefined {
      const entry = entries.get(keyOf(token, projectId));
      if (!entry || entry.expiresAt <= now()) return undefined;
      return entry.facts;
    },
    set(token: string, projectId: string, facts: SessionFacts): void {
      if (entries.size > 10_000) entries.clear();
      entries.set(keyOf(token, projectId), { facts, expiresAt: now() + ttlMs, tokenHash: hashOf(token) });
    },
    forget(token: string): void {
      const tokenHash = hashOf(token);
      for (const [key, entry] of entries) if (entry.tokenHash === tokenHash) entries.delete(key);
    },
  };
}

export type SessionCache = ReturnType<typeof createSessionCache>;
