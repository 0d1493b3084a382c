import type { JsonObject } from "@bufbuild/protobuf";
import { Type } from "@fastify/type-provider-typebox";
import {
  AudienceType,
  type Campaign,
  type CampaignStats,
  CampaignStatus,
  CampaignType,
} from "@herald/proto/herald/campaigns/v1/campaigns_service_pb";
import { DataSchema } from "../contacts/json.js";
import { EditorSourceRef, editorOf } from "../editor-source.js";
import { DateTime, iso, Nullable } from "../shared-schemas.js";

/** REST ↔ proto for campaigns; the shape is SPEC.md's "Campaign" (docs/api-decisions.md "Campaigns" for the rest). */

export const statusNames = ["DRAFT", "SCHEDULED", "SENDING", "SENT", "CANCELLED"] as const;
export type StatusName = (typeof statusNames)[number];
export const statusToProto: Record<StatusName, CampaignStatus> = {
  DRAFT: CampaignStatus.DRAFT,
  SCHEDULED: CampaignStatus.SCHEDULED,
  SENDING: CampaignStatus.SENDING,
  SENT: CampaignStatus.SENT,
  CANCELLED: CampaignStatus.CANCELLED,
};
const statusName = (status: CampaignStatus): StatusName =>
  (Object.entries(statusToProto).find(([, value]) => value === status)?.[0] as StatusName | undefined) ?? "DRAFT";

type TypeName = "TRANSACTIONAL" | "MARKETING" | "HEADLESS";
export const typeToProto: Record<TypeName, CampaignType> = {
  TRANSACTIONAL: CampaignType.TRANSACTIONAL,
  MARKETING: CampaignType.MARKETING,
  HEADLESS: CampaignType.HEADLESS,
};
const typeName = (type: CampaignType): TypeName =>
  type === CampaignType.TRANSACTIONAL ? "TRANSACTIONAL" : type === CampaignType.HEADLESS ? "HEADLESS" : "MARKETING";

type AudienceName = "ALL" | "SEGMENT" | "FILTERED";
export const audienceToProto: Record<AudienceName, AudienceType> = {
  ALL: AudienceType.ALL,
  SEGMENT: AudienceType.SEGMENT,
  FILTERED: AudienceType.FILTERED,
};
const audienceName = (type: AudienceType): AudienceName =>
  type === AudienceType.SEGMENT ? "SEGMENT" : type === AudienceType.FILTERED ? "FILTERED" : "ALL";

export const CampaignStatusSchema = Type.Union([
  Type.Literal("DRAFT"),
  Type.Literal("SCHEDULED"),
  Type.Literal("SENDING"),
  Type.Literal("SENT"),
  Type.Literal("CANCELLED"),
]);
export const CampaignTypeSchema = Type.Union([Type.Literal("TRANSACTIONAL"), Type.Literal("MARKETING"), Type.Literal("HEADLESS")]);
export const AudienceTypeSchema = Type.Union([Type.Literal("ALL"), Type.Literal("SEGMENT"), Type.Literal("FILTERED")]);

export const CampaignSchema = Type.Object({
  id: Type.String(),
  projectId: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  subject: Type.String(),
  body: Type.String(),
  from: Type.String(),
  fromName: Nullable(Type.String()),
  replyTo: Nullable(Type.String()),
  type: CampaignTypeSchema,
  status: CampaignStatusSchema,
  audienceType: AudienceTypeSchema,
  audienceCondition: Nullable(DataSchema),
  segmentId: Nullable(Type.String()),
  scheduledFor: Nullable(DateTime),
  totalRecipients: Type.Integer(),
  sentCount: Type.Integer(),
  deliveredCount: Type.Integer(),
  openedCount: Type.Integer(),
  clickedCount: Type.Integer(),
  bouncedCount: Type.Integer(),
  stopReason: Nullable(Type.String()),
  sentAt: Nullable(DateTime),
  createdAt: Nullable(DateTime),
  updatedAt: Nullable(DateTime),
  /** Not in SPEC.md's campaign: the dashboard editor's source of the body, null when written as HTML. */
  editor: Nullable(EditorSourceRef),
});

export const toCampaignJson = (campaign: Campaign | undefined) => {
  if (!campaign) throw new Error("the campaigns service answered without a campaign");
  return {
    id: campaign.id,
    projectId: campaign.projectId,
    name: campaign.name,
    description: campaign.description || null,
    subject: campaign.subject,
    body: campaign.body,
    from: campaign.from,
    fromName: campaign.fromName || null,
    replyTo: campaign.replyTo || null,
    type: typeName(campaign.type),
    status: statusName(campaign.status),
    audienceType: audienceName(campaign.audienceType),
    audienceCondition: (campaign.audienceCondition as JsonObject | undefined) ?? null,
    segmentId: campaign.segmentId || null,
    scheduledFor: iso(campaign.scheduledFor),
    totalRecipients: Number(campaign.totalRecipients),
    sentCount: Number(campaign.sentCount),
    deliveredCount: Number(campaign.deliveredCount),
    openedCount: Number(campaign.openedCount),
    clickedCount: Number(campaign.clickedCount),
    bouncedCount: Number(campaign.bouncedCount),
    stopReason: campaign.stopReason || null,
    sentAt: iso(campaign.sentAt),
    createdAt: iso(campaign.createdAt),
    updatedAt: iso(campaign.updatedAt),
    editor: editorOf(campaign.editorJson),
  };
};

const ratio = (part: bigint, whole: bigint) => (whole > 0n ? Math.round((Number(part) / Number(whole)) * 10_000) / 10_000 : 0);

export const CampaignStatsSchema = Type.Object({
  campaignId: Type.String(),
  name: Type.String(),
  status: CampaignStatusSchema,
  totalRecipients: Type.Integer(),
  sent: Type.Integer(),
  delivered: Type.Integer(),
  opened: Type.Integer(),
  clicked: Type.Integer(),
  bounced: Type.Integer(),
  complained: Type.Integer(),
  unsubscribed: Type.Integer(),
  deliveryRate: Type.Number(),
  openRate: Type.Number(),
  clickRate: Type.Number(),
  bounceRate: Type.Number(),
  complaintRate: Type.Number(),
  unsubscribeRate: Type.Number(),
  sentAt: Nullable(DateTime),
});

/** Rates are fractions (0 to 1, four decimals): delivery, bounce over sent; open, click, complaint, unsubscribe over delivered (sent before any delivery is reported). */
export const toCampaignStatsJson = (stats: CampaignStats | undefined) => {
  if (!stats) throw new Error("the campaigns service answered without stats");
  const reached = stats.deliveredCount > 0n ? stats.deliveredCount : stats.sentCount;
  return {
    campaignId: stats.campaignId,
    name: stats.name,
    status: statusName(stats.status),
    totalRecipients: Number(stats.totalRecipients),
    sent: Number(stats.sentCount),
    delivered: Number(stats.deliveredCount),
    opened: Number(stats.openedCount),
    clicked: Number(stats.clickedCount),
    bounced: Number(stats.bouncedCount),
    complained: Number(stats.complainedCount),
    unsubscribed: Number(stats.unsubscribedCount),
    deliveryRate: ratio(stats.deliveredCount, stats.sentCount),
    openRate: ratio(stats.openedCount, reached),
    clickRate: ratio(stats.clickedCount, reached),
    bounceRate: ratio(stats.bouncedCount, stats.sentCount),
    complaintRate: ratio(stats.complainedCount, reached),
    unsubscribeRate: ratio(stats.unsubscribedCount, reached),
    sentAt: iso(stats.sentAt),
  };
};
