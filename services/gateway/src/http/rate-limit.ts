import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Redis } from "ioredis";
import { HttpProblem } from "./errors.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * A bucket apart from the API's: "recipient-link" for the links inside emails (the open pixel,
     * click redirects, the recipient's pages), "sign-up" for account creation.
     */
    rateLimitBucket?: "recipient-link" | "sign-up";
  }
}

const unlimitedRoutes = new Set(["/livez", "/webhooks/ses", "/webhooks/incoming/stripe"]);
const minute = 60_000;
const hour = 60 * minute;
const recipientPrefix = "recipient:";

/**
 * Whose budget a request spends: its project (public-key traffic apart from the rest, so that
 * a copied pk_ cannot block /v1/send), else its user, else its client address.
 */
function rateLimitKeyOf(request: FastifyRequest): string {
  // A mail provider's image proxy fetches pixels and follows links for many recipients from a few
  // addresses: it must neither spend those addresses' API budget nor be refused for it.
  if (request.routeOptions.config.rateLimitBucket === "recipient-link") return `${recipientPrefix}${request.ip}`;
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
  /** Requests per minute per client address to the links inside emails, apart from the API's budget. */
  recipientLinksPerMinute: number;
  /** Sign-ups per hour per client address. */
  signUpsPerHour: number;
}

/**
 * Fixed one-minute windows shared by every replica through Redis, with the IETF draft headers
 * (RateLimit-Limit, -Remaining, -Reset, Retry-After):
 * - per project, secret-key and session traffic in one bucket and public-key traffic in another;
 * - per project and client address for public-key traffic;
 * - per client address for failed authentications;
 * - per client address for the links inside emails, in a bucket apart from the API's;
 * - per client address for sign-ups, in one-hour windows.
 * The project buckets run after authentication so that they know the project. If Redis is down,
 * requests pass rather than fail.
 */
export async function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): Promise<AuthFailureLimit> {
  await app.register(rateLimit, {
    global: true,
    hook: "preHandler",
    max: (_request, key) => (key.startsWith(recipientPrefix) ? options.recipientLinksPerMinute : options.perMinute),
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

  const signUps = app.createRateLimit({
    max: options.signUpsPerHour,
    timeWindow: hour,
    keyGenerator: (request) => `sign-up:${request.ip}`,
  });
  app.addHook("preHandler", async (request) => {
    if (request.routeOptions.config.rateLimitBucket !== "sign-up") return;
    const limit = await signUps(request);
    if (!limit.isAllowed && limit.isExceeded) {
      throw new HttpProblem({
        statusCode: 429,
        code: "SIGNUP_RATE_LIMIT_EXCEEDED",
        message: `Too many sign-ups from this address: at most ${limit.max} per hour; retry in ${limit.ttlInSeconds} s`,
        details: { retryAfterSeconds: limit.ttlInSeconds },
      });
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
