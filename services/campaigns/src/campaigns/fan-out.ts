import { randomUUID } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { errorDetailOf } from "@herald/errors";
import { type BackgroundLoop, createBackgroundLoop, type Logger } from "@herald/platform";
import type { AudienceSchema, SegmentsService } from "@herald/proto/herald/contacts/v1/segments_service_pb";
import { CampaignEmailOutcome, type CampaignSendsService } from "@herald/proto/herald/delivery/v1/campaign_sends_service_pb";
import { describeProblem, type TemplateSource } from "@herald/rendering";
import type { RenderPool } from "@herald/rendering/pool";
import {
  type CampaignRow,
  checkpointFanOut,
  claimFanOut,
  fannedOutCampaigns,
  finishFanOut,
  handBackFanOuts,
  lockCampaign,
  markSent,
  markWithdrawn,
  releaseFanOut,
  startDueCampaigns,
  stopCampaign,
  unwithdrawnCampaigns,
} from "../db/campaigns.js";
import type { Db } from "../db/client.js";
import { isProjectStopped } from "../db/stopped-projects.js";

/** Strings rendered where the recipient's own links go; delivery writes the signed links in their place. */
export const linkMarkers = {
  unsubscribeUrl: "%%herald-unsubscribe-url%%",
  subscribeUrl: "%%herald-subscribe-url%%",
  manageUrl: "%%herald-manage-url%%",
} as const;

export interface FanOutOptions {
  /** Contacts streamed, rendered and enqueued together (at most 1,000, delivery's batch). */
  batchSize: number;
  /** How long a claim on a campaign's fan-out holds without a checkpoint. */
  leaseMs: number;
  /** How long one campaign's fan-out goes on before the other campaigns due get their turn (at least one batch). */
  turnMs: number;
  /** How often an idle loop looks for due campaigns and finished sends. */
  idleMs: number;
}

/** A campaign that cannot go on (its Liquid or its audience is gone): it ends CANCELLED with this reason. */
class FanOutStopped extends Error {
  override readonly name = "FanOutStopped";

  /** keepQueued: the emails already enqueued go out (a stop at the billing cap); otherwise they are withdrawn. */
  constructor(
    message: string,
    readonly keepQueued = false,
  ) {
    super(message);
  }
}

function audienceOf(row: CampaignRow): MessageInitShape<typeof AudienceSchema>["kind"] {
  if (row.audienceType === "SEGMENT" && row.segmentId) return { case: "segmentId", value: row.segmentId };
  if (row.audienceType === "FILTERED" && row.audienceCondition) {
    return { case: "condition", value: row.audienceCondition as never };
  }
  return { case: "all", value: {} };
}

/** A contact's data as the audience stream carries it (JSON); {} when it does not parse. */
function dataOf(dataJson: string): Record<string, unknown> {
  try {
    const data: unknown = JSON.parse(dataJson);
    return typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * The campaigns' one background worker, on createBackgroundLoop. Each pass:
 * 1. moves due SCHEDULED campaigns to SENDING (SKIP LOCKED: one replica moves each);
 * 2. claims one SENDING campaign whose fan-out is unfinished (a lease: a replica that dies
 *    leaves it to another once the lease lapses) and fans it out: the audience streamed from
 *    contacts after the checkpointed contact id, each batch rendered from the campaign's one
 *    parsed template and enqueued in delivery under (campaign, contact) keys, then the cursor and
 *    totalRecipients moved in the transaction that holds the campaign's row lock, so a cancel
 *    waits for the batch and a resume after a crash re-sends at most one batch, which delivery
 *    answers as already enqueued;
 * 3. marks SENT the campaigns whose fan-out finished and of which delivery has nothing queued;
 * 4. retries the withdrawals of cancelled campaigns that delivery could not be asked for.
 */
export function createFanOut(deps: {
  db: Db;
  logger: Logger;
  renders: RenderPool;
  segments: Client<typeof SegmentsService>;
  campaignSends: Client<typeof CampaignSendsService>;
  options: FanOutOptions;
}): BackgroundLoop {
  const { db, logger, renders, options } = deps;
  const owner = randomUUID();

  /** The batch's emails, rendered in the render threads; a contact whose data breaks its render (a sandbox limit) is skipped. */
  async function renderBatch(row: CampaignRow, source: TemplateSource, contacts: Array<{ id: string; email: string; dataJson: string }>) {
    const results = await renders.renderEach(
      source,
      contacts.map((contact) => ({ data: dataOf(contact.dataJson), contact: { id: contact.id, email: contact.email }, ...linkMarkers })),
    );
    const emails: Array<{ contactId: string; to: string; subject: string; html: string }> = [];
    for (const [index, result] of results.entries()) {
      const contact = contacts[index];
      if (!contact) continue;
      if ("problem" in result) {
        logger.warn(
          { campaignId: row.id, contactId: contact.id, problem: describeProblem(result.problem) },
          "skipping a recipient whose email does not render",
        );
        continue;
      }
      if (result.subject === "" || result.body === "") continue;
      emails.push({ contactId: contact.id, to: contact.email, subject: result.subject, html: result.body });
    }
    return emails;
  }

  /** Enqueues one batch under the campaign's lock; false when the campaign stopped or another process owns it now. */
  async function commitBatch(
    row: CampaignRow,
    emails: Awaited<ReturnType<typeof renderBatch>>,
    cursor: string,
    done: boolean,
  ): Promise<boolean> {
    return db.$transaction(
      async (tx) => {
        const current = await lockCampaign(tx, row.projectId, row.id);
        if (current?.status !== "SENDING" || current.fanoutOwner !== owner) return false;
        // Read under the campaign's lock, which the consumer of project.disabled takes too: no batch enqueues after it.
        if (await isProjectStopped(tx, row.projectId)) {
          await releaseFanOut(tx, row.id);
          return false;
        }
        let recipients = 0;
        if (emails.length > 0) {
          const answer = await deps.campaignSends.enqueueCampaignEmails({
            projectId: row.projectId,
            campaignId: row.id,
            from: { email: row.fromAddress, name: row.fromName ?? "" },
            ...(row.replyTo ? { replyTo: { email: row.replyTo } } : {}),
            markers: linkMarkers,
            emails,
          });
          recipients = answer.results.filter((result) => result.outcome !== CampaignEmailOutcome.SUPPRESSED).length;
        }
        await checkpointFanOut(tx, row.id, { cursor, recipients, done, leaseMs: options.leaseMs });
        return true;
      },
      { maxWait: 10_000, timeout: 120_000 },
    );
  }

  async function fanOut(row: CampaignRow, signal: AbortSignal): Promise<void> {
    const source = { subject: row.subject, body: row.body };
    const [problem] = await renders.validate(source);
    if (problem) throw new FanOutStopped(`The campaign's Liquid does not parse: ${describeProblem(problem)}`);
    const stream = deps.segments.streamAudience(
      {
        projectId: row.projectId,
        audience: { kind: audienceOf(row) },
        batchSize: options.batchSize,
        afterContactId: row.fanoutCursor ?? "",
      },
      // A long audience has no deadline of its own: the loop's stop ends the stream through its signal.
      { signal, timeoutMs: 0 },
    );
    const turnEnds = Date.now() + options.turnMs;
    try {
      for await (const batch of stream) {
        const last = batch.contacts.at(-1);
        if (!last) continue;
        const emails = await renderBatch(row, source, batch.contacts);
        if (!(await commitBatch(row, emails, last.id, false))) return;
        if (signal.aborted) return;
        // The turn is over: the checkpoint holds the cursor, and the next claim of this campaign resumes after it.
        if (Date.now() >= turnEnds) return;
      }
    } catch (error) {
      if (error instanceof ConnectError && (error.code === Code.NotFound || error.code === Code.InvalidArgument)) {
        throw new FanOutStopped(`The audience cannot be read: ${error.rawMessage}`);
      }
      // Delivery refused the batch: the project's monthly campaign cap is reached. What it accepted before stays queued.
      if (error instanceof ConnectError && errorDetailOf(error)?.code === "BILLING_LIMIT_REACHED") {
        throw new FanOutStopped(`Stopped at the billing cap: ${error.rawMessage}`, true);
      }
      throw error;
    }
    await finishFanOut(db, row.id);
  }

  async function completeSent(): Promise<void> {
    for (const campaign of await fannedOutCampaigns(db)) {
      const progress = await deps.campaignSends.getCampaignProgress({ projectId: campaign.projectId, campaignId: campaign.id });
      if (progress.queued === 0n) await markSent(db, campaign.id);
    }
  }

  async function retryWithdrawals(): Promise<void> {
    for (const campaign of await unwithdrawnCampaigns(db)) {
      await deps.campaignSends.withdrawCampaignEmails({ projectId: campaign.projectId, campaignId: campaign.id });
      await markWithdrawn(db, campaign.id);
    }
  }

  const loop = createBackgroundLoop({
    name: "campaign fan-out",
    logger,
    idleMs: options.idleMs,
    async pass(signal) {
      await startDueCampaigns(db);
      const claimed = await claimFanOut(db, owner, options.leaseMs);
      if (claimed) {
        try {
          await fanOut(claimed, signal);
        } catch (error) {
          if (!(error instanceof FanOutStopped)) throw error;
          logger.warn({ campaignId: claimed.id, reason: error.message }, "campaign stopped");
          await stopCampaign(db, claimed.id, error.message, { keepQueued: error.keepQueued });
        }
      }
      await completeSent();
      await retryWithdrawals();
      return claimed ? "busy" : "idle";
    },
  });
  return {
    start: () => loop.start(),
    nudge: () => loop.nudge(),
    async stop() {
      await loop.stop();
      // Stopping (a rolling restart): another process takes this one's fan-outs on from their checkpoints at once.
      await handBackFanOuts(db, owner);
    },
    get finished() {
      return loop.finished;
    },
    get failures() {
      return loop.failures;
    },
  };
}
