import { createHash, timingSafeEqual } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { isUniqueViolation } from "@herald/db/unique-violation";
import { DomainError, domainErrorToConnect } from "@herald/errors";
import { type Context, context, propagation, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Logger } from "./logger.js";

const tracer = () => trace.getTracer("herald-rpc");

/** A PostgreSQL SQLSTATE, from pg's error or from Prisma's driver adapter error (model API or raw query). */
function sqlStateOf(error: unknown): string | undefined {
  const found = error as { code?: unknown; cause?: { code?: unknown }; meta?: { driverAdapterError?: { cause?: { code?: unknown } } } };
  for (const code of [found?.code, found?.cause?.code, found?.meta?.driverAdapterError?.cause?.code]) {
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/**
 * Whether an error means the database could not be reached or dropped the connection (a restart, a failover): a
 * connection exception (SQLSTATE class 08), the server shutting down or starting (57P01-57P03), a refused or reset
 * socket, pg's "Connection terminated", or Prisma's driver adapter saying so. Looked for along the error's causes.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const found = queue.shift() as
      | { code?: unknown; kind?: unknown; message?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } }
      | undefined;
    if (found === null || typeof found !== "object" || seen.has(found)) continue;
    seen.add(found);
    const code = typeof found.code === "string" ? found.code : "";
    const kind = typeof found.kind === "string" ? found.kind : "";
    const message = typeof found.message === "string" ? found.message : "";
    if (/^08[0-9A-Z]{3}$/.test(code) || ["57P01", "57P02", "57P03"].includes(code)) return true;
    if (["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "EAI_AGAIN", "P1001", "P1017"].includes(code)) {
      return true;
    }
    if (["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout"].includes(kind)) return true;
    if (
      /Connection terminated|connection error|timeout exceeded when trying to connect|the database system is (shutting down|starting up)/i.test(
        message,
      )
    ) {
      return true;
    }
    queue.push(found.cause, found.meta?.driverAdapterError);
  }
  return false;
}

/** NUL (U+0000), which PostgreSQL stores neither in text (22021) nor in jsonb (22P05): the caller's value, not our fault. */
const unstorableCharacterStates = new Set(["22021", "22P05"]);

/**
 * What a handler's error becomes on the wire: domain errors become ConnectErrors
 * with their detail; a unique violation that a handler did not translate becomes
 * AlreadyExists; a value PostgreSQL cannot store (a NUL character, which the
 * gateway refuses for REST but a direct gRPC caller may send) becomes InvalidArgument;
 * a database that cannot be reached becomes Unavailable (retry later); anything else
 * is logged with its cause and reaches the caller only as "internal error". Batch handlers use it for each failed item.
 */
export function toConnectError(error: unknown, options: { logger: Logger; procedure: string }): ConnectError {
  if (error instanceof ConnectError) return error;
  if (error instanceof DomainError) return domainErrorToConnect(error);
  if (isUniqueViolation(error)) {
    return domainErrorToConnect(new DomainError("conflict", "CONFLICT", "The resource already exists", { cause: error }));
  }
  const sqlState = sqlStateOf(error);
  if (sqlState !== undefined && unstorableCharacterStates.has(sqlState)) {
    return domainErrorToConnect(
      new DomainError("invalid-argument", "INVALID_CHARACTER", "A value holds a NUL character (U+0000), which cannot be stored", {
        cause: error,
      }),
    );
  }
  if (isDatabaseUnavailable(error)) {
    // A restart or failover: the caller may retry (503 at the gateway); the pool reconnects by itself.
    options.logger.warn({ err: error, procedure: options.procedure }, "the database cannot be reached");
    return new ConnectError("the database cannot be reached; retry shortly", Code.Unavailable);
  }
  options.logger.error({ err: error, procedure: options.procedure }, "unhandled error in RPC handler");
  return new ConnectError("internal error", Code.Internal);
}

/**
 * Server side: every error a handler throws leaves as toConnectError made it, a server-streaming handler's too, which
 * it throws while its messages are read, after the call itself has returned.
 */
export function createErrorInterceptor(options: { logger: Logger }): Interceptor {
  return (next) => async (request) => {
    const convert = (error: unknown) => toConnectError(error, { logger: options.logger, procedure: request.url });
    try {
      const response = await next(request);
      if (!response.stream) return response;
      const messages = response.message;
      async function* converted() {
        try {
          yield* messages;
        } catch (error) {
          throw convert(error);
        }
      }
      return { ...response, message: converted() };
    } catch (error) {
      throw convert(error);
    }
  };
}

/** Server side: one log line per call with its duration and outcome. */
export function createLoggingInterceptor(options: { logger: Logger }): Interceptor {
  return (next) => async (request) => {
    const started = performance.now();
    try {
      const response = await next(request);
      options.logger.debug({ procedure: request.method.name, ms: performance.now() - started }, "rpc ok");
      return response;
    } catch (error) {
      const code = error instanceof ConnectError ? Code[error.code] : "Unknown";
      options.logger.info({ procedure: request.method.name, ms: performance.now() - started, code }, "rpc failed");
      throw error;
    }
  };
}

const headerSetter = { set: (carrier: Headers, key: string, value: string) => carrier.set(key, value) };
const headerGetter = {
  keys: (carrier: Headers) => [...carrier.keys()],
  get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
};

/** Runs one call inside a span of the given kind, marking the span failed when the call fails. */
function tracedCall(kind: SpanKind, parent: Context, next: Parameters<Interceptor>[0]): ReturnType<Interceptor> {
  return (request) =>
    tracer().startActiveSpan(
      `${request.service.typeName}/${request.method.name}`,
      { kind, attributes: { "rpc.system": "connect_rpc", "rpc.method": request.method.name } },
      parent,
      async (span) => {
        if (kind === SpanKind.CLIENT) propagation.inject(context.active(), request.header, headerSetter);
        try {
          return await next(request);
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
          throw error;
        } finally {
          span.end();
        }
      },
    );
}

/** Client side: a span per call, its context sent in the request headers (W3C traceparent). */
export function createClientTracingInterceptor(): Interceptor {
  return (next) => (request) => tracedCall(SpanKind.CLIENT, context.active(), next)(request);
}

/** Server side: continues the caller's trace from the request headers. */
export function createServerTracingInterceptor(): Interceptor {
  return (next) => (request) =>
    tracedCall(SpanKind.SERVER, propagation.extract(context.active(), request.header, headerGetter), next)(request);
}

/** The interceptors every service installs, in order. */
export function serverInterceptors(options: { logger: Logger }): Interceptor[] {
  return [createServerTracingInterceptor(), createLoggingInterceptor(options), createErrorInterceptor(options)];
}

/** The gRPC health service: open to every caller, so that probes need no token. */
const healthService = "grpc.health.v1.Health";

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * Server side: refuses a call without `authorization: Bearer <INTERNAL_RPC_TOKEN>` as Unauthenticated, but for
 * grpc.health.v1. The comparison is of SHA-256 digests in constant time, so that neither the length nor a prefix of the
 * token shows in how long a refusal takes.
 */
export function createTokenAuthInterceptor(token: string): Interceptor {
  const expected = digest(`Bearer ${token}`);
  return (next) => (request) => {
    if (request.service.typeName === healthService) return next(request);
    const presented = request.header.get("authorization");
    if (presented === null || !timingSafeEqual(digest(presented), expected)) {
      throw new ConnectError("missing or wrong internal RPC token (INTERNAL_RPC_TOKEN)", Code.Unauthenticated);
    }
    return next(request);
  };
}

/** Client side: presents the internal RPC token on every call. */
export function createTokenInterceptor(token: string): Interceptor {
  const value = `Bearer ${token}`;
  return (next) => (request) => {
    request.header.set("authorization", value);
    return next(request);
  };
}
