import type { ConnectRouter } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "@herald/proto/grpc/health/v1/health_pb";

export { ServingStatus };

/**
 * The serving status behind grpc.health.v1. "" is the whole server, and what readiness asks: NOT_SERVING
 * while a dependency cannot be reached (createReadinessWatch). `liveness` is SERVING as long as the process
 * serves, whatever its dependencies do (liveness probes). A service is registered under its fully-qualified proto name.
 */
export interface HealthState {
  set(service: string, status: ServingStatus): void;
  get(service: string): ServingStatus | undefined;
  /** Marks every service NOT_SERVING, as a process does when it begins to shut down; later set() calls change nothing. */
  shutdown(): void;
  watch(service: string, signal: AbortSignal): AsyncIterable<ServingStatus>;
}

/** The name a liveness probe asks for (grpc.health.v1 Check with `service: "liveness"`). */
export const livenessService = "liveness";

export function createHealthState(services: string[] = []): HealthState {
  const statuses = new Map<string, ServingStatus>([
    ["", ServingStatus.SERVING],
    [livenessService, ServingStatus.SERVING],
  ]);
  let shutDown = false;
  for (const service of services) statuses.set(service, ServingStatus.SERVING);
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of listeners) listener();
  };
  return {
    set(service, status) {
      // A process that began to shut down never serves again (a readiness pass may finish after it began).
      if (shutDown || statuses.get(service) === status) return;
      statuses.set(service, status);
      notify();
    },
    get: (service) => statuses.get(service),
    shutdown() {
      shutDown = true;
      for (const service of statuses.keys()) statuses.set(service, ServingStatus.NOT_SERVING);
      notify();
    },
    async *watch(service, signal) {
      let last: ServingStatus | undefined;
      while (!signal.aborted) {
        const current = statuses.get(service) ?? ServingStatus.SERVICE_UNKNOWN;
        if (current !== last) {
          last = current;
          yield current;
        }
        await new Promise<void>((resolve) => {
          const done = () => {
            listeners.delete(done);
            signal.removeEventListener("abort", done);
            resolve();
          };
          listeners.add(done);
          signal.addEventListener("abort", done);
        });
      }
    },
  };
}

export function registerHealth(router: ConnectRouter, state: HealthState): ConnectRouter {
  return router.service(Health, {
    check(request) {
      const status = state.get(request.service);
      if (status === undefined) throw new ConnectError(`unknown service ${request.service}`, Code.NotFound);
      return { status };
    },
    async *watch(request, context) {
      for await (const status of state.watch(request.service, context.signal)) yield { status };
    },
  });
}
