import { Counter, Histogram, type Metrics } from "@herald/platform";
import type { FastifyInstance } from "fastify";

/** Seconds, from a cached pixel (well under a millisecond) to a CSV import or an image upload. */
const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * RED per HTTP route: `http_server_requests_total{method, route, status_code}` and
 * `http_server_request_duration_seconds{method, route}`. The route is the pattern the request matched
 * (`/contacts/:id`), never the raw URL, so that ids and tokens make no series of their own; a request that
 * matched none is `unmatched`.
 */
export function registerHttpMetrics(app: FastifyInstance, metrics: Metrics): void {
  const requests = new Counter({
    name: "http_server_requests_total",
    help: "HTTP requests answered, by route pattern and status",
    labelNames: ["method", "route", "status_code"],
    registers: [metrics.registry],
  });
  const duration = new Histogram({
    name: "http_server_request_duration_seconds",
    help: "Time from a request's arrival to its answer, by route pattern",
    labelNames: ["method", "route"],
    buckets,
    registers: [metrics.registry],
  });
  app.addHook("onResponse", (request, reply, done) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? "unmatched" };
    requests.inc({ ...labels, status_code: String(reply.statusCode) });
    duration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
}
