import { HealthCheckResponse_ServingStatus as ServingStatus } from "@herald/proto/grpc/health/v1/health_pb";
import type { FastifyInstance } from "fastify";
import { type UpstreamName, type Upstreams, upstreamNames } from "../upstreams.js";

interface ServiceHealth {
  status: "up" | "down";
  latencyMs: number;
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

/**
 * `/health` asks every service over grpc.health.v1, in parallel: 200 when all serve, else 503 (a readiness
 * probe). `/livez` answers as long as this process serves requests, whatever its upstreams do (a liveness
 * probe: restarting the gateway would not bring a stopped service back).
 */
export function registerHealthRoute(app: FastifyInstance, upstreams: Upstreams): void {
  app.get("/livez", async (_request, reply) => reply.send({ status: "up" }));
  app.get("/health", async (_request, reply) => {
    const results = await Promise.all(upstreamNames.map(async (name) => [name, await probe(upstreams, name)] as const));
    const services = Object.fromEntries(results) as Record<UpstreamName, ServiceHealth>;
    const up = results.every(([, health]) => health.status === "up");
    return reply.status(up ? 200 : 503).send({ status: up ? "up" : "down", services });
  });
}
