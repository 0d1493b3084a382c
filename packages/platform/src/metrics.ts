import http from "node:http";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Logger } from "./logger.js";
import { guardRequests } from "./request-guard.js";

/** The services' own counters and histograms come from the same prom-client as the registry they join. */
export { Counter, Histogram } from "prom-client";

/** One value of a gauge read at scrape time. */
export interface GaugeSample {
  labels?: Record<string, string>;
  value: number;
}

/** Seconds: RPCs and HTTP requests take from a fraction of a millisecond to tens of seconds (imports, uploads). */
const durationBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** How long a scrape waits for one reader (a SQL count, Kafka's offsets) before it reports that reader's gauges empty. */
const defaultReadTimeoutMs = 3_000;

export interface Metrics {
  /** Every series of this process; a service registers its own counters and histograms here (`registers: [metrics.registry]`). */
  readonly registry: Registry;
  /**
   * Server side: RED per RPC, named as go-grpc-prometheus names them so that its dashboards and alerts apply:
   * `grpc_server_handled_total{grpc_service, grpc_method, grpc_type, grpc_code}` and
   * `grpc_server_handling_seconds{grpc_service, grpc_method, grpc_type}`. createRpcServer installs it first, so that
   * calls refused for their token count too.
   */
  readonly rpcInterceptor: Interceptor;
  /**
   * Gauges whose values one `read` gives at scrape time (a query that counts a queue). The readers of one scrape run
   * concurrently, each once for all its gauges; one that fails or takes longer than `timeoutMs` leaves its gauges
   * without samples for that scrape and counts in `herald_metrics_read_failures_total{reader}` (shown from the next
   * scrape on, since a scrape collects every series at once), so that a stale value never passes for a current one.
   */
  observe<Name extends string>(options: {
    reader: string;
    gauges: Record<Name, { help: string; labelNames?: readonly string[] }>;
    read: () => Promise<Partial<Record<Name, GaugeSample[]>>>;
    timeoutMs?: number;
  }): void;
  /** Serves `GET /metrics` over HTTP/1.1 on METRICS_PORT; without a port (unset), serves nothing. Resolves with the bound port. */
  listen(host?: string): Promise<number | undefined>;
  close(): Promise<void>;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * 200 for `GET /metrics` (with any query, which Prometheus may add), 400 for a target that is no path (absolute form
 * `http://[`, `*`, `example.com:443`), 404 for any other path and method. Compared as strings: the target is not
 * parsed, so nothing a client sends can make it throw.
 */
export function statusOfTarget(method: string | undefined, target: string | undefined): 200 | 400 | 404 {
  if (target === undefined || !target.startsWith("/")) return 400;
  const query = target.indexOf("?");
  const path = query === -1 ? target : target.slice(0, query);
  return method === "GET" && path === "/metrics" ? 200 : 404;
}

/**
 * The Prometheus metrics of one process (prom-client): the default process and Node.js series, RED per RPC,
 * and whatever the service registers. `port` is METRICS_PORT; unset, nothing listens (the registry still counts).
 */
export function createMetrics(options: { port?: number | undefined; logger: Logger }): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const readFailures = new Counter({
    name: "herald_metrics_read_failures_total",
    help: "Scrapes at which a reader of gauges (a queue count, Kafka offsets) failed or timed out; its gauges were left empty",
    labelNames: ["reader"],
    registers: [registry],
  });

  const handled = new Counter({
    name: "grpc_server_handled_total",
    help: "RPCs completed on the server, by outcome",
    labelNames: ["grpc_service", "grpc_method", "grpc_type", "grpc_code"],
    registers: [registry],
  });
  const handling = new Histogram({
    name: "grpc_server_handling_seconds",
    help: "Time from an RPC's arrival to its response (for streams: to the response's start)",
    labelNames: ["grpc_service", "grpc_method", "grpc_type"],
    buckets: durationBuckets,
    registers: [registry],
  });
  const rpcInterceptor: Interceptor = (next) => async (request) => {
    const labels = { grpc_service: request.service.typeName, grpc_method: request.method.name, grpc_type: request.method.methodKind };
    const stop = handling.startTimer(labels);
    try {
      const response = await next(request);
      handled.inc({ ...labels, grpc_code: "OK" });
      return response;
    } catch (error) {
      handled.inc({ ...labels, grpc_code: Code[ConnectError.from(error).code] ?? "Unknown" });
      throw error;
    } finally {
      stop();
    }
  };

  let server: http.Server | undefined;
  return {
    registry,
    rpcInterceptor,
    observe({ reader, gauges, read, timeoutMs = defaultReadTimeoutMs }) {
      let inFlight: Promise<Partial<Record<string, GaugeSample[]>>> | undefined;
      // A scrape collects every gauge at once: the first of them starts the read, the others share it.
      const samples = () => {
        inFlight ??= withTimeout(read(), timeoutMs, reader)
          .catch((error: unknown) => {
            readFailures.inc({ reader });
            options.logger.warn({ err: error, reader }, "a metrics reader failed; its gauges are empty in this scrape");
            return {};
          })
          .finally(() => {
            inFlight = undefined;
          });
        return inFlight;
      };
      for (const [name, gauge] of Object.entries(gauges) as Array<[string, { help: string; labelNames?: readonly string[] }]>) {
        new Gauge({
          name,
          help: gauge.help,
          labelNames: gauge.labelNames ?? [],
          registers: [registry],
          async collect() {
            const values = (await samples())[name];
            this.reset();
            // reset() leaves a gauge without labels at 0: a read that failed must leave no sample at all.
            if ((gauge.labelNames ?? []).length === 0) this.remove({});
            for (const sample of values ?? []) this.set(sample.labels ?? {}, sample.value);
          },
        });
      }
    },
    listen(host = "0.0.0.0") {
      const { port } = options;
      if (port === undefined) return Promise.resolve(undefined);
      // Bytes node:http cannot parse are answered 400 by its default `clientError` handler, which closes the socket.
      const listening = http.createServer(
        guardRequests(options.logger, "metrics", (request: http.IncomingMessage, response: http.ServerResponse) => {
          const status = statusOfTarget(request.method, request.url);
          if (status !== 200) {
            response.writeHead(status, { "content-type": "text/plain" }).end(`${http.STATUS_CODES[status]}: metrics are at GET /metrics\n`);
            return;
          }
          registry.metrics().then(
            (text) => response.writeHead(200, { "content-type": registry.contentType }).end(text),
            (error: unknown) => {
              options.logger.error({ err: error }, "collecting metrics failed");
              response.writeHead(500, { "content-type": "text/plain" }).end("collecting metrics failed\n");
            },
          );
        }),
      );
      server = listening;
      return new Promise((resolve, reject) => {
        listening.once("error", reject);
        listening.listen(port, host, () => {
          listening.off("error", reject);
          // Once listening, an error (accepting past the open-files limit) is logged: the server keeps listening.
          listening.on("error", (error) => options.logger.error({ err: error }, "the metrics server failed to accept a connection"));
          resolve((listening.address() as AddressInfo).port);
        });
      });
    },
    close() {
      const listening = server;
      if (!listening?.listening) return Promise.resolve();
      return new Promise((resolve) => {
        listening.close(() => resolve());
        listening.closeAllConnections();
      });
    },
  };
}
