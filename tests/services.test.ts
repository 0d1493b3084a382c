import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { Health, HealthCheckResponse_ServingStatus } from "@herald/proto/grpc/health/v1/health_pb";
import { producerNames, repoPath, serviceNames } from "@herald/testing";
import pg from "pg";
import { describe, expect, inject, it } from "vitest";

const { stack } = inject("herald");

const protoDir = repoPath("proto");

function grpcJsClient(file: string, service: string, url: string): grpc.Client {
  const definition = protoLoader.loadSync(file, { includeDirs: [protoDir], longs: String, enums: String, defaults: true });
  const loaded = grpc.loadPackageDefinition(definition);
  const Constructor = service
    .split(".")
    .reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], loaded) as grpc.ServiceClientConstructor;
  return new Constructor(new URL(url).host, grpc.credentials.createInsecure());
}

function callGrpcJs<T>(client: grpc.Client, method: string, request: object, metadata = new grpc.Metadata()): Promise<T> {
  return new Promise((resolve, reject) => {
    type Method = (req: object, metadata: grpc.Metadata, cb: (error: Error | null, response: T) => void) => void;
    const fn = (client as unknown as Record<string, Method>)[method];
    fn?.call(client, request, metadata, (error, response) => (error ? reject(error) : resolve(response)));
  });
}

/** INTERNAL_RPC_TOKEN, which global-setup gave the stack and this process alike (.herald/secrets.json). */
function withToken(token = process.env.INTERNAL_RPC_TOKEN ?? ""): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return metadata;
}

describe.each(serviceNames)("the %s service", (name) => {
  const url = stack.serviceUrls[name];

  it("answers grpc.health.v1 to a Connect client over gRPC and over the Connect protocol", async () => {
    const overGrpc = createClient(Health, createGrpcTransport({ baseUrl: url }));
    const overConnect = createClient(Health, createConnectTransport({ baseUrl: url, httpVersion: "2" }));
    expect((await overGrpc.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect((await overConnect.check({ service: `herald.${name}.v1.${name[0]?.toUpperCase()}${name.slice(1)}Service` })).status).toBe(
      HealthCheckResponse_ServingStatus.SERVING,
    );
  });

  it("answers a plain @grpc/grpc-js client built from the same .proto files: health without a token, the rest with it", async () => {
    expect(process.env.INTERNAL_RPC_TOKEN?.length).toBeGreaterThanOrEqual(32);
    const health = grpcJsClient(`${protoDir}/grpc/health/v1/health.proto`, "grpc.health.v1.Health", url);
    await expect(callGrpcJs(health, "Check", { service: "" })).resolves.toEqual({ status: "SERVING" });
    await expect(callGrpcJs(health, "Check", { service: "no.such.Service" })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    health.close();

    const Service = `${name[0]?.toUpperCase()}${name.slice(1)}Service`;
    const client = grpcJsClient(`${protoDir}/herald/${name}/v1/${name}_service.proto`, `herald.${name}.v1.${Service}`, url);
    // Without INTERNAL_RPC_TOKEN, or with another, or not as a bearer token: Unauthenticated.
    await expect(callGrpcJs(client, "GetServiceInfo", {})).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    await expect(callGrpcJs(client, "GetServiceInfo", {}, withToken("x".repeat(43)))).rejects.toMatchObject({
      code: grpc.status.UNAUTHENTICATED,
    });
    const bare = new grpc.Metadata();
    bare.set("authorization", process.env.INTERNAL_RPC_TOKEN ?? "");
    await expect(callGrpcJs(client, "GetServiceInfo", {}, bare)).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    const response = await callGrpcJs<{ info: { name: string; databaseSchema: string; version: string } }>(
      client,
      "GetServiceInfo",
      {},
      withToken(),
    );
    expect(response.info).toMatchObject({ name, databaseSchema: name, version: "0.1.0" });
    client.close();
  });

  it("migrated its own schema at start", async () => {
    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`, [
        name,
      ]);
      const producer = (producerNames as readonly string[]).includes(name);
      expect(rows.map((row) => row.table_name)).toEqual(
        expect.arrayContaining(["_prisma_migrations", "processed_events", ...(producer ? ["outbox_events"] : [])]),
      );
    } finally {
      await client.end();
    }
  });
});
