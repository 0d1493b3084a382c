import { createHash } from "node:crypto";
import { createCache } from "@herald/platform";

export interface SessionFacts {
  userId: string;
  /** Present when the session was checked against a project. */
  role?: number;
  /** Whether that project is disabled: its routes refuse the session as they refuse its keys. */
  projectDisabled?: boolean;
}

/**
 * Remembers verified sessions for a few seconds, so that a dashboard page that fires
 * many requests asks identity once. Logout on this replica forgets the session at
 * once; other replicas trust it at most for the TTL. A project's lifecycle events (disabled,
 * enabled, deleted) forget its entries on every replica.
 */
export function createSessionCache(ttlMs: number, now?: () => number) {
  const entries = createCache<string, { facts: SessionFacts; tokenHash: string; projectId: string }>({ max: 10_000, ttlMs, now });
  const hashOf = (token: string) => createHash("sha256").update(token).digest("hex");
  const keyOf = (token: string, projectId: string) => `${hashOf(token)}:${projectId}`;
  return {
    get(token: string, projectId: string): SessionFacts | undefined {
      return entries.peek(keyOf(token, projectId))?.facts;
    },
    set(token: string, projectId: string, facts: SessionFacts): void {
      entries.set(keyOf(token, projectId), { facts, tokenHash: hashOf(token), projectId });
    },
    /** Forgets every session's facts about a project (its members' roles changed). */
    forgetProject(projectId: string): void {
      entries.deleteWhere((entry) => entry.projectId === projectId);
    },
    forget(token: string): void {
      const tokenHash = hashOf(token);
      entries.deleteWhere((entry) => entry.tokenHash === tokenHash);
    },
  };
}

export type SessionCache = ReturnType<typeof createSessionCache>;
