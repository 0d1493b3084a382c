import http2 from "node:http2";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { DomainError, errorDetailOf } from "@herald/errors";
import { Health } from "@herald/proto/grpc/health/v1/health_pb";
import { ContactsService } from "@herald/proto/herald/contacts/v1/contacts_service_pb";
import { IdentityService } from "@herald/proto/herald/identity/v1/identity_service_pb";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { internalRpcToken } from "./config.js";
import { createHealthState, ServingStatus } from "./health.js";
import { serverInterceptors } from "./interceptors.js";
import { createLogger } from "./logger.js";
import { createRpcClient, createRpcTransport } from "./rpc-client.js";
import { createRpcServer, type RpcServer } from "./rpc-server.js";
import { startTelemetry, type Telemetry } from "./telemetry.js";

const logger = createLogger({ name: "rpc-test", level: "silent" });

describe("the RPC server and client", () => {
  const exporter = new InMemorySpanExporter();
  let telemetry: Telemetry;
  let server: RpcServer;
  let baseUrl: string;
  let failWith: unknown;

  beforeAll(async () => {
    telemetry = startTelemetry({ serviceName: "rpc-test", exporter });
    server = createRpcServer({
      health: createHealthState([IdentityService.typeName]),
      interceptors: serverInterceptors({ logger }),
      logger,
      routes: (router) => {
        router.service(IdentityService, {
          getServiceInfo: () => {
            if (failWith) throw failWith;
            return { info: { name: "identity" } };
          },
        });
        // A server-streaming method that fails after its first message, or before any.
        router.service(ContactsService, {
          async *exportContact(request) {
            if (request.contactId === "later") yield { part: { case: "contact", value: { id: "later" } } };
            if (failWith) throw failWith;
          },
        });
      },
    });
    baseUrl = `http://127.0.0.1:${await server.listen(0, "127.0.0.1")}`;
  });

  afterAll(async () => {
    await server.close();
    await telemetry.shutdown();
  });

  it("joins the caller's trace on the server side", async () => {
    exporter.reset();
    failWith = undefined;
    const client = createRpcClient(IdentityService, { baseUrl, connections: 2 });
    expect((await client.getServiceInfo({})).info?.name).toBe("identity");
    const spans = exporter.getFinishedSpans();
    const clientSpan = spans.find((span) => span.kind === 2);
    const serverSpan = spans.find((span) => span.kind === 1);
    expect(clientSpan && serverSpan).toBeTruthy();
    expect(serverSpan?.spanContext().traceId).toBe(clientSpan?.spanContext().traceId);
    expect(serverSpan?.parentSpanContext?.spanId).toBe(clientSpan?.spanContext().spanId);
  });

  it("sends a domain error with its machine code, and hides an unexpected one", async () => {
    const client = createRpcClient(IdentityService, { baseUrl, protocol: "grpc" });
    failWith = new DomainError("permission-denied", "PROJECT_DISABLED", "This project is disabled");
    const denied = await client.getServiceInfo({}).catch((error: unknown) => error);
    expect(denied).toBeInstanceOf(ConnectError);
    expect((denied as ConnectError).code).toBe(Code.PermissionDenied);
    expect(errorDetailOf(denied as ConnectError)?.code).toBe("PROJECT_DISABLED");

    failWith = new Error("secret database detail");
    const internal = (await client.getServiceInfo({}).catch((error: unknown) => error)) as ConnectError;
    expect(internal.code).toBe(Code.Internal);
    expect(internal.rawMessage).not.toContain("secret");

    failWith = Object.assign(new Error("Unique constraint failed"), { code: "P2002" });
    expect(((await client.getServiceInfo({}).catch((error: unknown) => error)) as ConnectError).code).toBe(Code.AlreadyExists);
  });

  it("sends a streaming handler's domain error with its machine code too, before or after its first message", async () => {
    failWith = new DomainError("not-found", "CONTACT_NOT_FOUND", "Contact not found");
    for (const protocol of ["grpc", "connect"] as const) {
      const client = createRpcClient(ContactsService, { baseUrl, protocol });
      for (const contactId of ["first", "later"]) {
        const read: string[] = [];
        const failed = await (async () => {
          for await (const message of client.exportContact({ projectId: "p", contactId })) read.push(message.part.case ?? "");
        })().catch((error: unknown) => error);
        expect(read).toEqual(contactId === "later" ? ["contact"] : []);
        expect(failed, `${protocol} ${contactId}`).toBeInstanceOf(ConnectError);
        expect((failed as ConnectError).code).toBe(Code.NotFound);
        expect(errorDetailOf(failed as ConnectError)?.code).toBe("CONTACT_NOT_FOUND");
      }
    }
    failWith = new Error("secret database detail");
    const client = createRpcClient(ContactsService, { baseUrl });
    const internal = (await (async () => {
      for await (const _ of client.exportContact({ projectId: "p", contactId: "later" })) void _;
    })().catch((error: unknown) => error)) as ConnectError;
    expect(internal.code).toBe(Code.Internal);
    expect(internal.rawMessage).not.toContain("secret");
  });

  it("reports NOT_SERVING once the server begins to shut down, through Watch as well", async () => {
    const health = createClient(Health, createRpcTransport({ baseUrl }));
    const abort = new AbortController();
    const updates = health.watch({ service: IdentityService.typeName }, { signal: abort.signal })[Symbol.asyncIterator]();
    expect((await updates.next()).value?.status).toBe(ServingStatus.SERVING);
    server.health.set(IdentityService.typeName, ServingStatus.NOT_SERVING);
    expect((await updates.next()).value?.status).toBe(ServingStatus.NOT_SERVING);
    expect((await health.check({ service: IdentityService.typeName })).status).toBe(ServingStatus.NOT_SERVING);
    server.health.set(IdentityService.typeName, ServingStatus.SERVING);
    abort.abort();
  });

  it("retries a side-effect-free call while the upstream is unreachable, and nothing else", async () => {
    let attempts = 0;
    const countAttempts: Interceptor = (next) => (request) => {
      attempts++;
      return next(request);
    };
    const options = { baseUrl: "http://127.0.0.1:9", retries: 2, interceptors: [countAttempts] };
    const error = (await createRpcClient(IdentityService, options)
      .getServiceInfo({})
      .catch((e: unknown) => e)) as ConnectError;
    expect(error.code).toBe(Code.Unavailable);
    expect(attempts).toBe(3);

    attempts = 0;
    // Health.Check declares no idempotency level, so it is tried once.
    await createRpcClient(Health, options)
      .check({ service: "" })
      .catch(() => {});
    expect(attempts).toBe(1);
  });
  it("answers 400 to a request whose :authority no URL can hold, and keeps serving", async () => {
    const session = http2.connect(baseUrl);
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const stream = session.request({
        ":method": "POST",
        ":path": "/grpc.health.v1.Health/Check",
        ":authority": "[",
        "content-type": "application/grpc",
      });
      stream.on("response", (headers) => resolve(headers[":status"]));
      stream.on("error", reject);
      stream.end();
    });
    session.destroy();
    expect(status).toBe(400);
    expect((await createRpcClient(Health, { baseUrl }).check({ service: "" })).status).toBe(ServingStatus.SERVING);
  });
});

describe("the internal RPC token", () => {
  const token = "t".repeat(40);
  let server: RpcServer;
  let baseUrl: string;

  beforeAll(async () => {
    server = createRpcServer({
      health: createHealthState([IdentityService.typeName]),
      interceptors: serverInterceptors({ logger }),
      logger,
      routes: (router) => router.service(IdentityService, { getServiceInfo: () => ({ info: { name: "identity" } }) }),
      token,
    });
    baseUrl = `http://127.0.0.1:${await server.listen(0, "127.0.0.1")}`;
  });

  afterAll(() => server.close());

  it("serves a client that presents it, over Connect and gRPC", async () => {
    for (const protocol of ["connect", "grpc"] as const) {
      expect((await createRpcClient(IdentityService, { baseUrl, protocol, token }).getServiceInfo({})).info?.name).toBe("identity");
    }
  });

  it("refuses another token as Unauthenticated, but answers health", async () => {
    const other = { baseUrl, token: "u".repeat(40), retries: 0 };
    const error = await createRpcClient(IdentityService, other)
      .getServiceInfo({})
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.Unauthenticated);
    expect((await createRpcClient(Health, other).check({ service: "" })).status).toBe(ServingStatus.SERVING);
  });

  it("is required unless NODE_ENV is development or test, and falls back to a public one there", () => {
    expect(() => internalRpcToken({})).toThrow(/INTERNAL_RPC_TOKEN: is required/);
    expect(() => internalRpcToken({ NODE_ENV: "production" })).toThrow(/INTERNAL_RPC_TOKEN: is required/);
    expect(() => internalRpcToken({ INTERNAL_RPC_TOKEN: "short" })).toThrow(/at least 32 characters/);
    expect(internalRpcToken({ NODE_ENV: "test" })).toBe(internalRpcToken({ NODE_ENV: "development" }));
    expect(internalRpcToken({ INTERNAL_RPC_TOKEN: token })).toBe(token);
  });
});
