import { randomUUID } from "node:crypto";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { type ConditionTree, referencesOf } from "@herald/conditions";
import { DomainError, errorDetailOf, validationFailed } from "@herald/errors";
import type { SegmentsService } from "@herald/proto/herald/contacts/v1/segments_service_pb";
import type { CampaignSendsService } from "@herald/proto/herald/delivery/v1/campaign_sends_service_pb";
import { EmailKind, type EmailsService } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { liquidFailure } from "@herald/rendering";
import type { RenderPool } from "@herald/rendering/pool";
import {
  audienceConditionColumn,
  type CampaignListQuery,
  type CampaignRow,
  findCampaign,
  listCampaigns,
  lockCampaign,
  type Tx,
} from "../db/campaigns.js";
import type { Db } from "../db/client.js";
import {
  type CampaignFields,
  type CampaignFieldsInput,
  checkCampaignFields,
  type JsonObject,
  maxScheduleAheadMs,
} from "../domain/campaign-fields.js";
import { campaignNotFound, requireCampaignDeletable, requireCampaignMay } from "../domain/campaign-status.js";
import { isId, requireProjectId } from "../domain/ids.js";

export type Campaigns = ReturnType<typeof createCampaigns>;

export interface CampaignsDeps {
  db: Db;
  /** Where Liquid is checked and rendered (createRenderPool). */
  renders: RenderPool;
  segments: Client<typeof SegmentsService>;
  campaignSends: Client<typeof CampaignSendsService>;
  emails: Client<typeof EmailsService>;
  /** Wakes the fan-out loop: a campaign is ready to go. */
  nudgeFanOut: () => void;
}

const isCode = (error: unknown, code: Code) => error instanceof ConnectError && error.code === code;

/**
 * The contacts service names a bad node of a condition under `condition`; the campaign's field is
 * audienceCondition. Same status and code as for a segment, the path under the campaign's field.
 */
function audienceConditionFailure(error: ConnectError): DomainError {
  const detail = errorDetailOf(error);
  const rename = (field: string) => field.replace(/^condition/, "audienceCondition");
  return new DomainError(
    "validation",
    detail?.code || "VALIDATION_ERROR",
    error.rawMessage.replaceAll("condition.", "audienceCondition."),
    {
      fieldViolations: (detail?.fieldViolations ?? []).map((violation) => ({
        field: rename(violation.field),
        message: violation.message,
        code: violation.code,
        ...(violation.received ? { received: violation.received } : {}),
      })),
      details: { ...(detail?.details ?? {}) },
      ...(detail?.suggestion ? { suggestion: detail.suggestion } : {}),
    },
  );
}

/** A campaign's use of a contact field: its audience condition names data.<key>, or its Liquid reads the key. */
export function campaignUsesField(campaign: Pick<CampaignRow, "audienceCondition" | "subject" | "body">, field: string): boolean {
  const key = field.startsWith("data.") ? field.slice("data.".length).split(".")[0] : field;
  if (!key) return false;
  if (campaign.audienceCondition && referencesOf(campaign.audienceCondition as unknown as ConditionTree).fields.includes(key)) return true;
  const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const read = new RegExp(`\\{[{%][^}]*?(?:^|[^\\w.])(?:data\\.)?${escaped}(?![\\w])[^}]*?[%}]\\}|data\\[["']${escaped}["']\\]`);
  return read.test(campaign.subject) || read.test(campaign.body);
}

export const campaignUsesEvent = (campaign: Pick<CampaignRow, "audienceCondition">, name: string): boolean =>
  campaign.audienceCondition !== null && referencesOf(campaign.audienceCondition as unknown as ConditionTree).events.includes(name);

export const campaignUsesSegment = (campaign: Pick<CampaignRow, "audienceCondition" | "segmentId">, segmentId: string): boolean =>
  campaign.segmentId === segmentId.toLowerCase() ||
  (campaign.audienceCondition !== null &&
    referencesOf(campaign.audienceCondition as unknown as ConditionTree).segments.includes(segmentId.toLowerCase()));

/**
 * Campaigns: their fields checked against the other services (the segment and the condition
 * with contacts, the sender's domain with delivery), their status moves made under the row's
 * lock, so that a move and a fan-out batch never interleave.
 */
export function createCampaigns(deps: CampaignsDeps) {
  const { db, renders } = deps;

  async function checked(projectId: string, input: CampaignFieldsInput): Promise<CampaignFields> {
    const result = checkCampaignFields(input);
    if (!result.ok) {
      const [first] = result.violations;
      throw validationFailed(`Invalid ${first?.field}: it ${first?.message}`, result.violations);
    }
    const { fields } = result;
    const problems = await renders.validate({ subject: fields.subject, body: fields.body });
    if (problems.length > 0) throw liquidFailure(problems);
    if (fields.audienceType === "SEGMENT" && fields.segmentId) {
      try {
        await deps.segments.getSegment({ projectId, id: fields.segmentId });
      } catch (error) {
        if (!isCode(error, Code.NotFound)) throw error;
        throw validationFailed("Invalid segmentId: it names no segment of this project", [
          {
            field: "segmentId",
            message: "must name a segment of this project",
            code: "not_found",
            received: JSON.stringify(fields.segmentId),
          },
        ]);
      }
    }
    if (fields.audienceType === "FILTERED" && fields.audienceCondition) {
      try {
        const answer = await deps.segments.validateCondition({ projectId, condition: fields.audienceCondition as never });
        fields.audienceCondition = (answer.condition as JsonObject | undefined) ?? fields.audienceCondition;
      } catch (error) {
        if (error instanceof ConnectError && error.code === Code.InvalidArgument) throw audienceConditionFailure(error);
        throw error;
      }
    }
    await deps.campaignSends.checkSender({ projectId, from: fields.fromAddress });
    return fields;
  }

  const dataOf = (fields: CampaignFields) => ({
    ...fields,
    audienceCondition: audienceConditionColumn(fields.audienceCondition as object | null),
    editor: audienceConditionColumn(fields.editor),
  });

  async function get(projectId: string, id: string): Promise<CampaignRow> {
    requireProjectId(projectId);
    const row = isId(id) ? await findCampaign(db, projectId, id) : null;
    if (!row) throw campaignNotFound();
    return row;
  }

  /** Runs `change` on the locked campaign; 404 when the project has no such campaign. */
  function withLocked<T>(projectId: string, id: string, change: (row: CampaignRow, tx: Tx) => Promise<T>): Promise<T> {
    requireProjectId(projectId);
    if (!isId(id)) throw campaignNotFound();
    return db.$transaction(
      async (tx) => {
        const row = await lockCampaign(tx, projectId, id);
        if (!row) throw campaignNotFound();
        return change(row, tx);
      },
      // A fan-out batch may hold the lock while delivery stores it.
      { maxWait: 10_000, timeout: 60_000 },
    );
  }

  return {
    get,

    list(projectId: string, query: CampaignListQuery) {
      requireProjectId(projectId);
      return listCampaigns(db, projectId, query);
    },

    async create(projectId: string, input: CampaignFieldsInput): Promise<CampaignRow> {
      requireProjectId(projectId);
      const fields = await checked(projectId, input);
      return db.campaign.create({ data: { projectId, ...dataOf(fields) } });
    },

    async update(projectId: string, id: string, input: CampaignFieldsInput): Promise<CampaignRow> {
      await get(projectId, id);
      const fields = await checked(projectId, input);
      return withLocked(projectId, id, async (row, tx) => {
        requireCampaignMay("update", row.status);
        return tx.campaign.update({
          where: { id },
          data: dataOf(fields),
        });
      });
    },

    async remove(projectId: string, id: string): Promise<void> {
      await withLocked(projectId, id, async (row, tx) => {
        requireCampaignDeletable(row);
        await tx.campaign.delete({ where: { id } });
        await tx.campaignEngagement.deleteMany({ where: { projectId, campaignId: id } });
      });
    },

    async duplicate(projectId: string, id: string): Promise<CampaignRow> {
      const row = await get(projectId, id);
      return db.campaign.create({
        data: {
          projectId,
          name: `${row.name} (copy)`.slice(0, 200),
          description: row.description,
          subject: row.subject,
          body: row.body,
          fromAddress: row.fromAddress,
          fromName: row.fromName,
          replyTo: row.replyTo,
          type: row.type,
          audienceType: row.audienceType,
          audienceCondition: audienceConditionColumn(row.audienceCondition as object | null),
          segmentId: row.segmentId,
          editor: audienceConditionColumn(row.editor as object | null),
        },
      });
    },

    /** DRAFT only. A time in the future schedules it; none, or one already past, starts the fan-out now. */
    async send(projectId: string, id: string, scheduledFor: Date | undefined, now = new Date()): Promise<CampaignRow> {
      if (scheduledFor && scheduledFor.getTime() - now.getTime() > maxScheduleAheadMs) {
        throw validationFailed("Invalid scheduledFor: it is more than a year ahead", [
          {
            field: "scheduledFor",
            message: "must be at most 365 days ahead",
            code: "too_big",
            received: JSON.stringify(scheduledFor.toISOString()),
          },
        ]);
      }
      const later = scheduledFor !== undefined && scheduledFor.getTime() > now.getTime();
      const sent = await withLocked(projectId, id, async (row, tx) => {
        requireCampaignMay("send", row.status);
        return tx.campaign.update({
          where: { id },
          data: later
            ? { status: "SCHEDULED", scheduledFor }
            : { status: "SENDING", sentAt: new Date(), ...(scheduledFor ? { scheduledFor } : {}) },
        });
      });
      deps.nudgeFanOut();
      return sent;
    },

    /**
     * SCHEDULED or SENDING to CANCELLED. The row's lock waits for a fan-out batch under way, so
     * nothing is enqueued after the answer; then delivery withdraws what is still queued (the
     * fan-out loop retries that when delivery cannot be reached now).
     */
    async cancel(projectId: string, id: string): Promise<{ campaign: CampaignRow; withdrawn: number }> {
      const cancelled = await withLocked(projectId, id, async (row, tx) => {
        requireCampaignMay("cancel", row.status);
        return tx.campaign.update({
          where: { id },
          data: { status: "CANCELLED", stopReason: "cancelled", fanoutOwner: null, fanoutLeaseUntil: null },
        });
      });
      if (cancelled.sentAt === null) return { campaign: cancelled, withdrawn: 0 };
      const { withdrawn } = await deps.campaignSends.withdrawCampaignEmails({ projectId, campaignId: id });
      const campaign = await db.campaign.update({ where: { id }, data: { withdrawnAt: new Date() } });
      return { campaign, withdrawn: Number(withdrawn) };
    },

    /** One email rendered as the campaign's to `email`, outside its counters (it carries no campaign id). */
    async sendTest(projectId: string, id: string, email: string): Promise<string> {
      const row = await get(projectId, id);
      if (email.length > 254 || !/^[^\s@<>()",;:\\]+@[^\s@<>()",;:\\]+\.[^\s@<>()",;:\\]+$/.test(email.trim())) {
        throw validationFailed("Invalid email: it must be an email address", [
          { field: "email", message: "must be an email address", code: "invalid_string", received: JSON.stringify(email) },
        ]);
      }
      const [rendered] = await renders.renderEach(
        { subject: row.subject, body: row.body },
        // A test goes to an address, not to a contact: the recipient's links lead nowhere.
        [{ data: {}, contact: { email: email.trim() }, unsubscribeUrl: "#", subscribeUrl: "#", manageUrl: "#" }],
      );
      if (!rendered) throw new Error("the render threads answered no render");
      if ("problem" in rendered) throw liquidFailure([rendered.problem]);
      const answer = await deps.emails.enqueueEmail({
        projectId,
        idempotencyKey: `campaign-test:${id}:${randomUUID()}`,
        to: { email: email.trim() },
        from: { email: row.fromAddress, name: row.fromName ?? "" },
        ...(row.replyTo ? { replyTo: { email: row.replyTo } } : {}),
        subject: `[Test] ${rendered.subject}`.slice(0, 998),
        html: rendered.body,
        kind: EmailKind.CAMPAIGN,
      });
      return answer.emailId;
    },

    async usage(projectId: string, uses: (row: CampaignRow) => boolean, statuses?: readonly string[]): Promise<CampaignRow[]> {
      requireProjectId(projectId);
      const rows = await db.campaign.findMany({
        where: { projectId, ...(statuses ? { status: { in: [...statuses] } } : {}) },
        orderBy: { createdAt: "desc" },
      });
      return rows.filter(uses);
    },

    async upcoming(projectId: string, limit: number): Promise<CampaignRow[]> {
      requireProjectId(projectId);
      return db.campaign.findMany({
        where: { projectId, status: "SCHEDULED" },
        orderBy: [{ scheduledFor: "asc" }, { id: "asc" }],
        take: limit,
      });
    },

    async sentCampaigns(projectId: string, since: Date | undefined): Promise<CampaignRow[]> {
      requireProjectId(projectId);
      return db.campaign.findMany({
        where: { projectId, sentAt: since ? { gte: since } : { not: null } },
        orderBy: { sentAt: "desc" },
        take: 1_000,
      });
    },
  };
}
