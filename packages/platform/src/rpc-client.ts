import type { DescService } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { internalRpcToken } from "./config.js";
import { createClientTracingInterceptor, createTokenInterceptor } from "./interceptors.js";

export interface RpcClientOptions {
  baseUrl: string;
  /** Deadline of each call unless the caller gives its own. */
  timeoutMs?: number;
  /** Attempts after the first for side-effect-free calls that found the upstream unavailable. */
  retries?: number;
  /** HTTP/2 connections to open to the upstream; calls are spread over them. */
  connections?: number;
  /** The gateway uses Connect with binary protobuf (faster here); internal callers may use gRPC. */
  protocol?: "connect" | "grpc";
  interceptors?: Interceptor[];
  /** The token every call presents; INTERNAL_RPC_TOKEN from the environment unless given. */
  token?: string;
}

/**
 * Retries a call that found no server, only when the method declares it has no
 * side effects or is idempotent: a write that may have landed is never repeated.
 */
export function createRetryInterceptor(retries: number, baseDelayMs = 50): Interceptor {
  return (next) => async (request) => {
    const safe =
      request.method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS ||
      request.method.idempotency === MethodOptions_IdempotencyLevel.IDEMPOTENT;
    for (let attempt = 0; ; attempt++) {
      try {
        return await next(request);
      } catch (error) {
        const retriable = safe && !request.stream && error instanceof ConnectError && error.code === Code.Unavailable;
        if (!retriable || attempt >= retries || request.signal.aborted) throw error;
        await new Promise((resolve) => setTimeout(resolve, baseDelayMs * 2 ** attempt));
      }
    }
  };
}

/** Spreads calls round-robin over several transports, one HTTP/2 session each. */
function roundRobin(transports: Transport[]): Transport {
  let next = 0;
  const pick = () => transports[next++ % transports.length] as Transport;
  return {
    unary: (...args) => pick().unary(...args),
    stream: (...args) => pick().stream(...args),
  };
}

export function createRpcTransport(options: RpcClientOptions): Transport {
  const interceptors = [
    createTokenInterceptor(options.token ?? internalRpcToken()),
    createClientTracingInterceptor(),
    createRetryInterceptor(options.retries ?? 2),
    ...(options.interceptors ?? []),
  ];
  // Calls stay inside the cluster: compressing them costs more CPU than the bytes are worth.
  const shared = { baseUrl: options.baseUrl, defaultTimeoutMs: options.timeoutMs ?? 5_000, acceptCompression: [], interceptors };
  const create = () =>
    options.protocol === "grpc"
      ? createGrpcTransport(shared)
      : createConnectTransport({ ...shared, httpVersion: "2", useBinaryFormat: true });
  return roundRobin(Array.from({ length: Math.max(1, options.connections ?? 1) }, create));
}

export function createRpcClient<Service extends DescService>(service: Service, options: RpcClientOptions): Client<Service> {
  return createClient(service, createRpcTransport(options));
}
