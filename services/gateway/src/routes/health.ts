import { createHash, timingSafeEqual } from "node:crypto";
import { HealthCheckResponse_ServingStatus as ServingStatus } from "@herald/proto/grpc/health/v1/health_pb";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { HttpProblem } from "../http/errors.js";
import { type UpstreamName, type Upstreams, upstreamNames } from "../upstreams.js";

interface ServiceHealth {
  status: "up" | "down";
  latencyMs: number;
  /** Why it is down: may name an internal address, so only operators see it. */
  error?: string;
}

async function probe(upstreams: Upstreams, name: UpstreamName): Promise<ServiceHealth> {
  const started = performance.now();
  try {
    const { status } = await upstreams.health[name].check({ service: "" });
    const latencyMs = Math.round(performance.now() - started);
    return status === ServingStatus.SERVING ? { status: "up", latencyMs } : { status: "down", latencyMs, error: ServingStatus[status] };
  } catch (error) {
    return { status: "down", latencyMs: Math.round(performance.now() - started), error: (error as Error).message };
  }
}

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * `/health` asks every service over grpc.health.v1, in parallel: 200 when all serve, else 503 (a readiness
 * probe). It is public and rate-limited like any route without a key: it says `up` or `down` per service and
 * nothing else, and requests that arrive while a probe is under way share it. `/health/details` adds each
 * service's latency and the reason it is down (which can name an internal address) for callers that present
 * `Authorization: Bearer <INTERNAL_RPC_TOKEN>`. `/livez` answers as long as this process serves requests,
 * whatever its upstreams do (a liveness probe: restarting the gateway would not bring a stopped service back).
 */
export function registerHealthRoute(app: FastifyInstance, deps: { upstreams: Upstreams; internalToken: string }): void {
  let probing: Promise<Record<UpstreamName, ServiceHealth>> | undefined;
  const probeAll = () => {
    probing ??= Promise.all(upstreamNames.map(async (name) => [name, await probe(deps.upstreams, name)] as const))
      .then((results) => Object.fromEntries(results) as Record<UpstreamName, ServiceHealth>)
      .finally(() => {
        probing = undefined;
      });
    return probing;
  };
  const allUp = (services: Record<UpstreamName, ServiceHealth>) => Object.values(services).every((health) => health.status === "up");

  const expectedToken = digest(deps.internalToken);
  const assertOperator = (request: FastifyRequest) => {
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? "")?.[1];
    if (presented === undefined || !timingSafeEqual(digest(presented), expectedToken)) {
      throw new HttpProblem({
        statusCode: 401,
        code: "UNAUTHORIZED",
        message: "The health details need `Authorization: Bearer <INTERNAL_RPC_TOKEN>`; GET /health is public",
      });
    }
  };

  app.get("/livez", async (_request, reply) => reply.send({ status: "up" }));
  app.get("/health", async (_request, reply) => {
    const services = await probeAll();
    const up = allUp(services);
    const statuses = Object.fromEntries(Object.entries(services).map(([name, health]) => [name, { status: health.status }]));
    return reply.status(up ? 200 : 503).send({ status: up ? "up" : "down", services: statuses });
  });
  app.get("/health/details", async (request, reply) => {
    assertOperator(request);
    const services = await probeAll();
    const up = allUp(services);
    return reply.status(up ? 200 : 503).send({ status: up ? "up" : "down", services });
  });
}
