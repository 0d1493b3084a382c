import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Redis } from "ioredis";
import { HttpProblem } from "./errors.js";

const unlimitedRoutes = new Set(["/health", "/webhooks/ses"]);

/** Whose budget a request spends: its project, else its user, else its client address. */
function rateLimitKeyOf(request: FastifyRequest): string {
  const auth = request.auth;
  if (auth?.projectId) return `project:${auth.projectId}`;
  if (auth?.via === "session") return `user:${auth.userId}`;
  return `ip:${request.ip}`;
}

/**
 * A fixed one-minute window per project shared by every replica through Redis,
 * with the IETF draft headers (RateLimit-Limit, -Remaining, -Reset, Retry-After).
 * It runs after authentication so that it knows the project. If Redis is down,
 * requests pass rather than fail.
 */
export async function registerRateLimit(app: FastifyInstance, options: { redis: Redis; perMinute: number }): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    hook: "preHandler",
    max: options.perMinute,
    timeWindow: 60_000,
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
}
