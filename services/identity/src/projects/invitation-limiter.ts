import { createHash } from "node:crypto";
import { DomainError } from "@herald/errors";
import type { Redis } from "ioredis";

export interface InvitationLimiter {
  /** Counts one invitation by the project to the address; throws INVITATION_LIMIT_EXCEEDED past either daily limit. */
  take(projectId: string, email: string): Promise<void>;
}

const windowSeconds = 24 * 3600;

/**
 * Fixed one-day windows in Redis, shared by every replica: one per project (a project cannot
 * mail hundreds of strangers from Herald's own domain) and one per recipient address across all
 * projects (many throw-away projects cannot bury one address in invitations). Both are counted
 * on every attempt, so a refused one counts too.
 */
export function createInvitationLimiter(deps: { redis: Redis; perProjectPerDay: number; perAddressPerDay: number }): InvitationLimiter {
  return {
    async take(projectId, email) {
      // The address is hashed so that Redis holds no list of addresses.
      const projectKey = `identity:invitations:project:${projectId}`;
      const addressKey = `identity:invitations:address:${createHash("sha256").update(email).digest("hex")}`;
      const results = await deps.redis
        .multi()
        .set(projectKey, 0, "EX", windowSeconds, "NX")
        .incr(projectKey)
        .ttl(projectKey)
        .set(addressKey, 0, "EX", windowSeconds, "NX")
        .incr(addressKey)
        .ttl(addressKey)
        .exec();
      const value = (index: number) => Number(results?.[index]?.[1] ?? 0);
      const overProject = value(1) > deps.perProjectPerDay;
      const overAddress = value(4) > deps.perAddressPerDay;
      if (!overProject && !overAddress) return;
      const retryAfter = Math.max(1, overProject ? value(2) : value(5));
      throw new DomainError(
        "rate-limited",
        "INVITATION_LIMIT_EXCEEDED",
        overProject ? "This project has sent too many invitations today" : "This address has received too many invitations today",
        {
          details: { retryAfterSeconds: String(retryAfter), limit: overProject ? "project" : "address" },
          suggestion: `Try again in ${Math.ceil(retryAfter / 3600)} hours`,
        },
      );
    },
  };
}
