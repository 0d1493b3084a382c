import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { DomainError } from "@herald/errors";
import {
  type Audience as ProtoAudience,
  type Segment,
  SegmentSchema,
  type SegmentsService,
  SegmentType,
} from "@herald/proto/herald/contacts/v1/segments_service_pb";
import type { SegmentRow } from "../db/segments.js";
import type { JsonObject } from "../domain/contact-data.js";
import type { Audience, Audiences } from "../segments/audience.js";
import type { SegmentInUseCheck } from "../segments/segment-campaigns.js";
import type { Segments } from "../segments/segments.js";
import { contactToProto } from "./proto-mapping.js";

const segmentToProto = (segment: SegmentRow): Segment =>
  create(SegmentSchema, {
    id: segment.id,
    projectId: segment.projectId,
    name: segment.name,
    description: segment.description,
    type: segment.type === "STATIC" ? SegmentType.STATIC : SegmentType.DYNAMIC,
    condition: segment.condition ?? undefined,
    trackMembership: segment.trackMembership,
    memberCount: BigInt(segment.memberCount),
    createdAt: timestampFromDate(segment.createdAt),
    updatedAt: timestampFromDate(segment.updatedAt),
    countedAt: segment.countedAt ? timestampFromDate(segment.countedAt) : undefined,
  });

function audienceFromProto(audience: ProtoAudience | undefined): Audience {
  switch (audience?.kind.case) {
    case "all":
      return { kind: "all" };
    case "segmentId":
      return { kind: "segment", segmentId: audience.kind.value };
    case "condition":
      return { kind: "condition", condition: audience.kind.value as JsonObject };
    default:
      throw new DomainError("invalid-argument", "AUDIENCE_REQUIRED", "Name the audience: all, a segment id or a condition");
  }
}

export function createSegmentsRpc(deps: {
  segments: Segments;
  audiences: Audiences;
  /** Unset where no campaigns service runs (RPC tests of this service alone). */
  refuseSegmentInUse?: SegmentInUseCheck;
}): ServiceImpl<typeof SegmentsService> {
  const { segments, audiences } = deps;
  return {
    async listSegments(request) {
      return { segments: (await segments.list(request.projectId)).map(segmentToProto) };
    },

    async createSegment(request) {
      const segment = await segments.create(request.projectId, {
        name: request.name,
        description: request.description,
        type: request.type === SegmentType.STATIC ? "STATIC" : "DYNAMIC",
        condition: request.condition as JsonObject | undefined,
        trackMembership: request.trackMembership,
      });
      return { segment: segmentToProto(segment) };
    },

    async getSegment(request) {
      return { segment: segmentToProto(await segments.get(request.projectId, request.id)) };
    },

    async updateSegment(request) {
      const segment = await segments.update(request.projectId, request.id, {
        name: request.name,
        description: request.description,
        condition: request.condition as JsonObject | undefined,
        trackMembership: request.trackMembership,
      });
      return { segment: segmentToProto(segment) };
    },

    async deleteSegment(request) {
      await deps.refuseSegmentInUse?.(request.projectId, request.id);
      await segments.delete(request.projectId, request.id);
      return {};
    },

    async listSegmentContacts(request) {
      const page = await segments.contacts(request.projectId, request.id, { page: request.page, pageSize: request.pageSize });
      return { contacts: page.contacts.map(contactToProto), total: BigInt(page.total), page: page.page, pageSize: page.pageSize };
    },

    async addSegmentMembers(request) {
      const result = await segments.addMembers(request.projectId, request.id, {
        emails: request.emails,
        createMissing: request.createMissing,
        subscribed: request.subscribed,
      });
      return {
        added: BigInt(result.added),
        created: BigInt(result.created),
        notFound: BigInt(result.notFound),
        alreadyMembers: BigInt(result.alreadyMembers),
      };
    },

    async removeSegmentMembers(request) {
      const result = await segments.removeMembers(request.projectId, request.id, request.emails);
      return { removed: BigInt(result.removed), notMembers: BigInt(result.notMembers) };
    },

    async refreshSegment(request) {
      return { segment: segmentToProto(await segments.refresh(request.projectId, request.id)) };
    },

    async computeSegment(request) {
      const change = await segments.compute(request.projectId, request.id);
      return { added: BigInt(change.added), removed: BigInt(change.removed), total: BigInt(change.total) };
    },

    async validateCondition(request) {
      if (!request.condition) throw new DomainError("invalid-argument", "CONDITION_REQUIRED", "Give the condition to validate");
      const tree = await segments.validate(request.projectId, request.condition as JsonObject);
      return { condition: tree as unknown as JsonObject };
    },

    async *streamAudience(request) {
      const batches = audiences.stream(request.projectId, audienceFromProto(request.audience), {
        batchSize: request.batchSize,
        afterContactId: request.afterContactId,
      });
      for await (const batch of batches) yield { contacts: batch };
    },

    async countAudience(request) {
      return { count: BigInt(await audiences.count(request.projectId, audienceFromProto(request.audience))) };
    },
  };
}
