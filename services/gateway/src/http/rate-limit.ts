import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Redis } from "ioredis";
import { HttpProblem } from "./errors.js";

const unlimitedRoutes = new Set(["/health", "/livez", "/webhooks/ses", "/webhooks/incoming/stripe"]);
const minute = 60_000;

/**
 * Whose budget a request spends: its project (public-key traffic apart from the rest, so that
 * a copied pk_ cannot block /v1/send), else its user, else its client address.
 */
function rateLimitKeyOf(request: FastifyRequest): string {
  const auth = request.auth;
  if (auth?.via === "key" && auth.keyKind === "public") return `project:${auth.projectId}:public`;
  if (auth?.projectId) return `project:${auth.projectId}`;
  if (auth?.via === "session") return `user:${auth.userId}`;
  return `ip:${request.ip}`;
}

const tooMany = (message: string, retryAfterSeconds: number) =>
  new HttpProblem({
    statusCode: 429,
    code: "RATE_LIMIT_EXCEEDED",
    message: `${message}; retry in ${retryAfterSeconds} s`,
    details: { retryAfterSeconds },
  });

/** Failed authentications counted per client address, checked before the next lookup. */
export interface AuthFailureLimit {
  /** Throws 429 when the address has failed too often this minute. */
  check(request: FastifyRequest): Promise<void>;
  record(request: FastifyRequest): Promise<void>;
}

export interface RateLimitOptions {
  redis: Redis;
  perMinute: number;
  publicKeyPerMinute: number;
  authFailuresPerMinute: number;
}

/**
 * Fixed one-minute windows shared by every replica through Redis, with the IETF draft headers
 * (RateLimit-Limit, -Remaining, -Reset, Retry-After):
 * - per project, secret-key and session traffic in one bucket and public-key traffic in another;
 * - per project and client address for public-key traffic;
 * - per client address for failed authentications.
 * The project buckets run after authentication so that they know the project. If Redis is down,
 * requests pass rather than fail.
 */
export async function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): Promise<AuthFailureLimit> {
  await app.register(rateLimit, {
    global: true,
    hook: "preHandler",
    max: options.perMinute,
    timeWindow: minute,
    redis: options.redis,
    nameSpace: "herald:rate-limit:",
    skipOnError: true,
    enableDraftSpec: true,
    keyGenerator: rateLimitKeyOf,
    // Amazon SNS posts from a few addresses and drops a message after a few refused tries: a
    // limited webhook would lose bounces. Its messages are checked by signature and topic instead.
    allowList: (request) => unlimitedRoutes.has(request.routeOptions.url ?? ""),
    errorResponseBuilder: (_request, context) =>
      new HttpProblem({
        statusCode: 429,
        code: "RATE_LIMIT_EXCEEDED",
        message: `Rate limit exceeded: at most ${context.max} requests per minute; retry in ${Math.ceil(context.ttl / 1000)} s`,
      }),
  });

  const publicClientLimit = app.createRateLimit({
    max: options.publicKeyPerMinute,
    timeWindow: minute,
    keyGenerator: (request) => `public-client:${request.auth?.projectId}:${request.ip}`,
  });
  app.addHook("preHandler", async (request) => {
    const auth = request.auth;
    if (auth?.via !== "key" || auth.keyKind !== "public") return;
    const limit = await publicClientLimit(request);
    if (!limit.isAllowed && limit.isExceeded) {
      throw tooMany(`Rate limit exceeded: at most ${limit.max} public-key requests per minute from one address`, limit.ttlInSeconds);
    }
  });

  const authFailures = app.createRateLimit({
    max: options.authFailuresPerMinute,
    timeWindow: minute,
    keyGenerator: (request) => `auth-failures:${request.ip}`,
  });
  return {
    async check(request) {
      const seen = await authFailures(request, { increment: false });
      // `read` reports the count so far: the limit is reached once it has been spent.
      if (!seen.isAllowed && seen.remaining <= 0 && seen.ttlInSeconds > 0) {
        throw tooMany(`Too many failed authentications from this address: at most ${seen.max} per minute`, seen.ttlInSeconds);
      }
    },
    async record(request) {
      await authFailures(request);
    },
  };
}
