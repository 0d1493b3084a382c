import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  DnsRecordPurpose,
  DnsRecordStatus,
  DnsRecordType,
  type Domain,
  DomainSchema,
  type DomainsService,
} from "@herald/proto/herald/delivery/v1/domains_service_pb";
import type { RecordStatus } from "../domain/dns-records.js";
import type { Domains, DomainView } from "../sending-domains/domains.js";

const statusToProto: Record<RecordStatus, DnsRecordStatus> = {
  pending: DnsRecordStatus.PENDING,
  verified: DnsRecordStatus.VERIFIED,
  failed: DnsRecordStatus.FAILED,
};

const purposeToProto = { dkim: DnsRecordPurpose.DKIM, spf: DnsRecordPurpose.SPF, dmarc: DnsRecordPurpose.DMARC } as const;

const domainToProto = ({ row, records }: DomainView): Domain =>
  create(DomainSchema, {
    id: row.id,
    projectId: row.projectId,
    domain: row.domain,
    verified: row.verified,
    records: records.map((record) => ({
      type: DnsRecordType.TXT,
      purpose: purposeToProto[record.purpose],
      name: record.name,
      value: record.value,
      status: statusToProto[record.status],
      required: record.required,
    })),
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
    checkedAt: row.checkedAt ? timestampFromDate(row.checkedAt) : undefined,
    verifiedAt: row.verifiedAt ? timestampFromDate(row.verifiedAt) : undefined,
  });

export function createDomainsRpc(deps: { domains: Domains }): ServiceImpl<typeof DomainsService> {
  const { domains } = deps;
  return {
    async createDomain(request) {
      return { domain: domainToProto(await domains.create(request.projectId, request.domain)) };
    },
    async listDomains(request) {
      return { domains: (await domains.list(request.projectId)).map(domainToProto) };
    },
    async getDomain(request) {
      return { domain: domainToProto(await domains.get(request.projectId, request.id)) };
    },
    async verifyDomain(request) {
      return { domain: domainToProto(await domains.verify(request.projectId, request.id)) };
    },
    async deleteDomain(request) {
      await domains.delete(request.projectId, request.id);
      return {};
    },
  };
}
