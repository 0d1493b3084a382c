import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { DnsRecordPurpose, DnsRecordStatus, type Domain } from "@herald/proto/herald/delivery/v1/domains_service_pb";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import type { Upstreams } from "../../upstreams.js";

const RecordSchema = Type.Object({
  type: Type.Literal("TXT"),
  name: Type.String(),
  value: Type.String(),
  status: Type.Union([Type.Literal("pending"), Type.Literal("verified"), Type.Literal("failed")]),
  purpose: Type.Union([Type.Literal("dkim"), Type.Literal("spf"), Type.Literal("dmarc")]),
  required: Type.Boolean(),
});

export const DomainSchema = Type.Object({
  id: Type.String(),
  projectId: Type.String(),
  domain: Type.String(),
  verified: Type.Boolean(),
  status: Type.Union([Type.Literal("verified"), Type.Literal("pending")]),
  records: Type.Array(RecordSchema),
  checkedAt: Type.Union([Type.String(), Type.Null()]),
  verifiedAt: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

const statusName = (status: DnsRecordStatus): "pending" | "verified" | "failed" =>
  status === DnsRecordStatus.VERIFIED ? "verified" : status === DnsRecordStatus.FAILED ? "failed" : "pending";

const purposeName = (purpose: DnsRecordPurpose): "dkim" | "spf" | "dmarc" =>
  purpose === DnsRecordPurpose.SPF ? "spf" : purpose === DnsRecordPurpose.DMARC ? "dmarc" : "dkim";

const isoOf = (timestamp: Parameters<typeof timestampDate>[0] | undefined) => (timestamp ? timestampDate(timestamp).toISOString() : null);

export const toDomainJson = (domain: Domain | undefined) => {
  if (!domain) throw new Error("the delivery service answered without a domain");
  return {
    id: domain.id,
    projectId: domain.projectId,
    domain: domain.domain,
    verified: domain.verified,
    status: domain.verified ? ("verified" as const) : ("pending" as const),
    records: domain.records.map((record) => ({
      type: "TXT" as const,
      name: record.name,
      value: record.value,
      status: statusName(record.status),
      purpose: purposeName(record.purpose),
      required: record.required,
    })),
    checkedAt: isoOf(domain.checkedAt),
    verifiedAt: isoOf(domain.verifiedAt),
    createdAt: isoOf(domain.createdAt) ?? "",
    updatedAt: isoOf(domain.updatedAt) ?? "",
  };
};

const DomainId = Type.Object({ id: Type.String({ minLength: 1 }) });

export function registerDomainRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { domains } = deps.upstreams;
  const config = { auth: "project" } as const;
  const tags = ["Domains"];

  api.get(
    "/domains/project/:projectId",
    {
      config: { auth: "project", projectInPath: "projectId" },
      schema: {
        tags,
        summary: "The project's sending domains, verified and pending, newest first",
        params: Type.Object({ projectId: Type.String({ minLength: 1 }) }),
        response: { 200: Type.Array(DomainSchema) },
      },
    },
    async (request) => (await domains.listDomains({ projectId: projectOf(request) })).domains.map(toDomainJson),
  );

  api.post(
    "/domains",
    {
      config,
      schema: {
        tags,
        summary: "Add a sending domain: answers the DNS records to publish (201)",
        body: Type.Object({ domain: Type.String({ minLength: 1, maxLength: 1000 }) }),
        response: { 201: DomainSchema },
      },
    },
    async (request, reply) => {
      const answer = await domains.createDomain({ projectId: projectOf(request), domain: request.body.domain });
      return reply.status(201).send(toDomainJson(answer.domain));
    },
  );

  api.get(
    "/domains/:id/verify",
    {
      config,
      schema: {
        tags,
        summary: "Look the domain's records up in DNS now; answers the domain with each record's status",
        params: DomainId,
        response: { 200: DomainSchema },
      },
    },
    async (request) => toDomainJson((await domains.verifyDomain({ projectId: projectOf(request), id: request.params.id })).domain),
  );

  api.delete(
    "/domains/:id",
    { config, schema: { tags, summary: "Remove a sending domain and its key", params: DomainId, response: { 204: Type.Null() } } },
    async (request, reply) => {
      await domains.deleteDomain({ projectId: projectOf(request), id: request.params.id });
      return reply.status(204).send(null);
    },
  );
}
