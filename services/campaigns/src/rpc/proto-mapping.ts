import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  AudienceType,
  type Campaign,
  type CampaignFields as CampaignFieldsProto,
  CampaignSchema,
  type CampaignStats,
  CampaignStatsSchema,
  CampaignStatus,
  CampaignType,
} from "@herald/proto/herald/campaigns/v1/campaigns_service_pb";
import type { CampaignRow } from "../db/campaigns.js";
import type { AudienceType as AudienceName, CampaignFieldsInput, JsonObject, CampaignType as TypeName } from "../domain/campaign-fields.js";
import type { CampaignStatus as StatusName } from "../domain/campaign-status.js";

export const statusToProto: Record<StatusName, CampaignStatus> = {
  DRAFT: CampaignStatus.DRAFT,
  SCHEDULED: CampaignStatus.SCHEDULED,
  SENDING: CampaignStatus.SENDING,
  SENT: CampaignStatus.SENT,
  CANCELLED: CampaignStatus.CANCELLED,
};

export const statusFromProto = (status: CampaignStatus): StatusName | undefined =>
  (Object.entries(statusToProto).find(([, value]) => value === status)?.[0] as StatusName | undefined) ?? undefined;

const typeToProto: Record<TypeName, CampaignType> = {
  TRANSACTIONAL: CampaignType.TRANSACTIONAL,
  MARKETING: CampaignType.MARKETING,
  HEADLESS: CampaignType.HEADLESS,
};

const audienceToProto: Record<AudienceName, AudienceType> = {
  ALL: AudienceType.ALL,
  SEGMENT: AudienceType.SEGMENT,
  FILTERED: AudienceType.FILTERED,
};

const nameOf = <N extends string, P>(table: Record<N, P>, value: P): N | undefined =>
  (Object.entries(table) as Array<[N, P]>).find(([, proto]) => proto === value)?.[0];

const time = (date: Date | null) => (date ? timestampFromDate(date) : undefined);

export const campaignToProto = (row: CampaignRow): Campaign =>
  create(CampaignSchema, {
    id: row.id,
    projectId: row.projectId,
    name: row.name,
    description: row.description ?? "",
    subject: row.subject,
    body: row.body,
    from: row.fromAddress,
    fromName: row.fromName ?? "",
    replyTo: row.replyTo ?? "",
    type: typeToProto[row.type as TypeName] ?? CampaignType.MARKETING,
    status: statusToProto[row.status as StatusName] ?? CampaignStatus.UNSPECIFIED,
    audienceType: audienceToProto[row.audienceType as AudienceName] ?? AudienceType.UNSPECIFIED,
    ...(row.audienceCondition ? { audienceCondition: row.audienceCondition as JsonObject as never } : {}),
    segmentId: row.segmentId ?? "",
    scheduledFor: time(row.scheduledFor),
    totalRecipients: BigInt(row.totalRecipients),
    sentCount: BigInt(row.sentCount),
    deliveredCount: BigInt(row.deliveredCount),
    openedCount: BigInt(row.openedCount),
    clickedCount: BigInt(row.clickedCount),
    bouncedCount: BigInt(row.bouncedCount),
    sentAt: time(row.sentAt),
    createdAt: time(row.createdAt),
    updatedAt: time(row.updatedAt),
    stopReason: row.stopReason ?? "",
    editorJson: row.editor === null ? "" : JSON.stringify(row.editor),
  });

export const statsToProto = (row: CampaignRow): CampaignStats =>
  create(CampaignStatsSchema, {
    campaignId: row.id,
    name: row.name,
    status: statusToProto[row.status as StatusName] ?? CampaignStatus.UNSPECIFIED,
    totalRecipients: BigInt(row.totalRecipients),
    sentCount: BigInt(row.sentCount),
    deliveredCount: BigInt(row.deliveredCount),
    openedCount: BigInt(row.openedCount),
    clickedCount: BigInt(row.clickedCount),
    bouncedCount: BigInt(row.bouncedCount),
    complainedCount: BigInt(row.complainedCount),
    unsubscribedCount: BigInt(row.unsubscribedCount),
    sentAt: time(row.sentAt),
  });

export function fieldsFromProto(fields: CampaignFieldsProto | undefined): CampaignFieldsInput {
  if (!fields) return {};
  return {
    name: fields.name,
    description: fields.description,
    subject: fields.subject,
    body: fields.body,
    from: fields.from,
    fromName: fields.fromName,
    replyTo: fields.replyTo,
    type: nameOf(typeToProto, fields.type),
    audienceType: nameOf(audienceToProto, fields.audienceType),
    audienceCondition: fields.audienceCondition as JsonObject | undefined,
    segmentId: fields.segmentId,
    editor: fields.editorJson,
  };
}
