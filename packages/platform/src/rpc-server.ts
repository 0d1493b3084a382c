import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { internalRpcToken } from "./config.js";
import { type HealthState, registerHealth } from "./health.js";
import { createTokenAuthInterceptor } from "./interceptors.js";
import type { Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";
import { guardRequests } from "./request-guard.js";

/** gRPC's customary bound on a message: what every service but delivery needs (the gateway reads at most 5 MB of CSV). */
export const defaultReadMaxBytes = 8 * 1024 * 1024;

export interface RpcServer {
  /** Resolves with the bound port once the server accepts connections. */
  listen(port: number, host?: string): Promise<number>;
  /** Stops accepting, lets in-flight calls finish, then closes lingering sessions. */
  close(graceMs?: number): Promise<void>;
  readonly health: HealthState;
}

/**
 * One cleartext HTTP/2 port that speaks gRPC, Connect and gRPC-Web, with
 * grpc.health.v1 beside the service's own routes. Every call but health must present
 * INTERNAL_RPC_TOKEN (internalRpcToken: required in production), and no request
 * message may be larger than readMaxBytes.
 */
export function createRpcServer(options: {
  routes: (router: ConnectRouter) => void;
  health: HealthState;
  interceptors?: Interceptor[];
  /** The largest request message: the service's largest legitimate one. defaultReadMaxBytes unless given. */
  readMaxBytes?: number;
  /** The token callers present; INTERNAL_RPC_TOKEN from the environment unless given. */
  token?: string;
  /** Counts every call (RED per RPC), those refused for their token included. */
  metrics?: Metrics | undefined;
  /** Where a request's failure outside its RPC handler (a malformed :authority) and a client's bad frames are logged. */
  logger: Logger;
}): RpcServer {
  const handler = connectNodeAdapter({
    grpc: true,
    grpcWeb: true,
    connect: true,
    readMaxBytes: options.readMaxBytes ?? defaultReadMaxBytes,
    // The token first, so that a caller without it costs no span, log line or handler; only the count before it.
    interceptors: [
      ...(options.metrics ? [options.metrics.rpcInterceptor] : []),
      createTokenAuthInterceptor(options.token ?? internalRpcToken()),
      ...(options.interceptors ?? []),
    ],
    routes(router) {
      registerHealth(router, options.health);
      options.routes(router);
    },
  });
  // The adapter builds a URL from each request's :authority (or host) and path before its own error handling: a client
  // that sends one no URL can hold is answered 400 here, and any other error of the adapter 500 by the guard.
  const server = http2.createServer(
    guardRequests(options.logger, "rpc", (request: http2.Http2ServerRequest, response: http2.Http2ServerResponse) => {
      if (!URL.canParse(`http://${request.authority}`)) {
        response.writeHead(400, { "content-type": "text/plain" });
        response.end("bad :authority\n");
        return;
      }
      return handler(request, response);
    }),
  );
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  // A client's bad frames end its session or stream, nothing more: logged at debug, as the client's problem.
  server.on("sessionError", (error) => options.logger.debug({ err: error }, "an HTTP/2 session failed"));
  server.on("streamError", (error) => options.logger.debug({ err: error }, "an HTTP/2 stream failed"));

  return {
    health: options.health,
    listen(port, host = "0.0.0.0") {
      return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          // Once listening, an error (accepting past the open-files limit) is logged: the server keeps listening.
          server.on("error", (error) => options.logger.error({ err: error }, "the RPC server failed to accept a connection"));
          resolve((server.address() as AddressInfo).port);
        });
      });
    },
    close(graceMs = 5_000) {
      options.health.shutdown();
      return new Promise((resolve) => {
        if (!server.listening) return resolve();
        const timer = setTimeout(() => {
          for (const session of sessions) session.destroy();
        }, graceMs);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        // Ask clients to go away; sessions close once their streams are done.
        for (const session of sessions) session.close();
      });
    },
  };
}
