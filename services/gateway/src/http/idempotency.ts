import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Redis } from "ioredis";
import { HttpProblem } from "./errors.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The route honours the Idempotency-Key header (POST /v1/send, POST /v1/track). */
    idempotency?: boolean;
  }
  interface FastifyRequest {
    idempotencyRecord?: string;
    /**
     * This use of the request's Idempotency-Key: `<time of its first use> <key>`. A key used again after it
     * expired is a new claim with a new time, so what a service stored under the last one does not answer it.
     */
    idempotencyClaim?: string;
  }
}

interface StoredRequest {
  request: string;
  at: string;
  statusCode: number | null;
}

const printableAscii = /^[\x20-\x7e]{1,255}$/;

/**
 * Redis cannot be reached: a key cannot be claimed, so the request is not run at all (it might run twice otherwise).
 * Requests without a key go on; the rate limit lets requests pass meanwhile (docs/api-decisions.md).
 */
const idempotencyUnavailable = (cause: unknown) =>
  Object.assign(
    new HttpProblem({
      statusCode: 503,
      code: "SERVICE_UNAVAILABLE",
      message: "Idempotency keys cannot be checked right now; nothing was done, retry with the same key shortly",
    }),
    { cause },
  );

/**
 * Idempotency-Key, per project, in Redis: the first request with a key claims it
 * atomically (SET NX), so of many concurrent requests exactly one proceeds and the
 * others get 409 IDEMPOTENCY_KEY_REUSED with what the key was first used for. A 4xx
 * answer releases the key (the request did nothing); any other answer is recorded
 * with its status for the key's lifetime.
 */
export function registerIdempotency(app: FastifyInstance, options: { redis: Redis; ttlHours: number }): void {
  const ttlMs = options.ttlHours * 3_600_000;
  const recordOf = (projectId: string, key: string) => `herald:idempotency:${projectId}:${createHash("sha256").update(key).digest("hex")}`;

  app.addHook("preHandler", async (request: FastifyRequest) => {
    if (!request.routeOptions.config.idempotency) return;
    const header = request.headers["idempotency-key"];
    if (header === undefined) return;
    const key = Array.isArray(header) ? header.join(",") : header;
    if (!printableAscii.test(key)) {
      throw new HttpProblem({
        statusCode: 400,
        code: "INVALID_IDEMPOTENCY_KEY",
        message: "Idempotency-Key must be 1 to 255 printable ASCII characters",
      });
    }
    const projectId = request.auth?.projectId ?? "";
    const record = recordOf(projectId, key);
    const stored: StoredRequest = {
      request: `${request.method} ${request.routeOptions.url}`,
      at: new Date().toISOString(),
      statusCode: null,
    };
    let claimed: string | null;
    try {
      claimed = await options.redis.set(record, JSON.stringify(stored), "PX", ttlMs, "NX");
    } catch (error) {
      throw idempotencyUnavailable(error);
    }
    if (claimed === "OK") {
      request.idempotencyRecord = record;
      request.idempotencyClaim = `${stored.at} ${key}`;
      return;
    }
    const original = JSON.parse((await options.redis.get(record).catch(() => null)) ?? "null") as StoredRequest | null;
    throw new HttpProblem({
      statusCode: 409,
      code: "IDEMPOTENCY_KEY_REUSED",
      message: "This Idempotency-Key was already used for another request",
      details: {
        key,
        originalRequest: original?.request ?? stored.request,
        originalRequestAt: original?.at ?? null,
        originalStatusCode: original?.statusCode ?? null,
      },
      suggestion: "Send a new Idempotency-Key for a new request",
    });
  });

  app.addHook("onResponse", async (request, reply) => {
    const record = request.idempotencyRecord;
    if (!record) return;
    try {
      if (reply.statusCode >= 400 && reply.statusCode < 500) {
        await options.redis.del(record);
        return;
      }
      const stored = JSON.parse((await options.redis.get(record)) ?? "null") as StoredRequest | null;
      if (stored) await options.redis.set(record, JSON.stringify({ ...stored, statusCode: reply.statusCode }), "KEEPTTL");
    } catch (error) {
      // Redis went away after the claim: the key stays claimed (a retry gets 409), only its recorded status is missing.
      request.log.warn({ err: error }, "cannot record the answer of an Idempotency-Key");
    }
  });
}
