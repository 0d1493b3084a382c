import { randomUUID } from "node:crypto";
import { createGroupCommit } from "@herald/db";
import { DomainError, validationFailed } from "@herald/errors";
import { currentTraceParent } from "@herald/platform";
import type pg from "pg";
import type { Db } from "../db/client.js";
import { claimedRowOf, type EmailRow, findEmail, type NewEmailRow, type StoredEmail } from "../db/emails.js";
import { type Standings, type StandingsAsked, standingsOf } from "../db/standings.js";
import type { AddressHash } from "../domain/address-hash.js";
import { type CapExceeded, capNameOf, exceededBy, nextMonthOf, usageKey } from "../domain/billing-caps.js";
import { domainOfAddress, type EmailCategory, type EmailInput, emailInputViolations, normaliseAddress } from "../domain/email-input.js";
import { isId, requireProjectId } from "../domain/ids.js";
import { laneOf } from "../domain/lanes.js";
import { type LinkTokens, recipientLinks, withRecipientLinks } from "../links/link-tokens.js";
import { type TrackingMode, trackingChoiceOf, withTracking } from "../tracking/html-tracking.js";
import { type EnqueueClaims, noClaims } from "./dispatcher.js";
import { type StoredOrRefused, storeWithinCaps } from "./store-within-caps.js";

export type Emails = ReturnType<typeof createEmails>;

const emailNotFound = () => new DomainError("not-found", "EMAIL_NOT_FOUND", "Email not found");

/**
 * The refusal of an enqueue past a billing cap: ResourceExhausted on the wire (429 at the
 * gateway) with the machine code BILLING_LIMIT_REACHED, which internal callers (campaigns,
 * workflows) match on; docs/decisions.md "Billing caps are enforced where delivery enqueues".
 */
export function capReached(exceeded: CapExceeded, now = new Date()): DomainError {
  const name = capNameOf[exceeded.category];
  const periodEnd = nextMonthOf(now);
  return new DomainError(
    "rate-limited",
    "BILLING_LIMIT_REACHED",
    `This project's monthly ${name} cap of ${exceeded.cap} emails is reached: ${exceeded.used} used, ${exceeded.wanted} more asked for`,
    {
      details: {
        category: name,
        limit: exceeded.cap.toString(),
        used: exceeded.used.toString(),
        requested: String(exceeded.wanted),
        periodEnd: periodEnd.toISOString(),
        retryAfterSeconds: String(Math.max(1, Math.ceil((periodEnd.getTime() - now.getTime()) / 1000))),
      },
      suggestion: "Raise the cap under billing limits, or send again once the next month begins",
    },
  );
}

/**
 * The refusal of an enqueue of a project the reputation guard suspended: PermissionDenied on the wire (403 at
 * the gateway) with the machine code PROJECT_SUSPENDED and the suspension's reason, which names the rate; a
 * workflow's SEND_EMAIL fails with it (docs/api-decisions.md "Reputation guard").
 */
export const projectSuspended = (reason: string): DomainError =>
  new DomainError("permission-denied", "PROJECT_SUSPENDED", reason, {
    suggestion: "The operator of this Herald deployment re-enables the project once the cause of its bounces or complaints is fixed",
  });

/** PROJECT_SUSPENDED when the standings (Emails.standingOf) have the reputation guard's suspension of the project. */
export function refuseSuspended(standings: Standings, projectId: string): void {
  const reason = standings.suspended.get(projectId);
  if (reason !== undefined) throw projectSuspended(reason);
}

/** RECIPIENT_SUPPRESSED for the first of the addresses the standings have suppressed in the project. */
export function refuseSuppressed(standings: Standings, projectId: string, addresses: readonly string[]): void {
  const refused = addresses.map(normaliseAddress).find((address) => standings.suppressed.has(`${projectId} ${address}`));
  if (!refused) return;
  // Refused at once rather than stored as FAILED: the caller learns it now, and the queue holds nothing it will not send.
  throw new DomainError(
    "failed-precondition",
    "RECIPIENT_SUPPRESSED",
    `${refused} is suppressed in this project: an earlier email bounced`,
    {
      details: { email: refused },
      suggestion: "Send to another address; a suppressed address is not sent to again",
    },
  );
}

/**
 * BILLING_LIMIT_REACHED when `count` more emails of the category would go past the project's cap as the month stood
 * in the standings: /v1/send asks before its contact upserts, so that a refused call changes nothing. The enqueue
 * itself decides under a lock (storeWithinCaps).
 */
export function refuseOverCap(standings: Standings, projectId: string, category: EmailCategory, count: number): void {
  const exceeded = exceededBy(new Map([[usageKey(projectId, category), count]]), standings.caps);
  if (exceeded) throw capReached(exceeded);
}

const orNull = (value: string | undefined): string | null => (value === undefined || value === "" ? null : value);

/** What the queue needs to give an email its links: the tokens, the gateway's address, the project's tracking mode. */
export interface EmailLinks {
  tokens: LinkTokens;
  publicUrl: string;
  modeOf(projectId: string): Promise<TrackingMode>;
}

/**
 * The row to store: the recipient's links where the caller rendered markers for them, the
 * HTML with tracking when the mode asks for it, and marketing mail with a one-click
 * List-Unsubscribe to the recipient's page when the caller gave none.
 */
function rowOf(projectId: string, input: EmailInput, links: (EmailLinks & { mode: TrackingMode }) | undefined): NewEmailRow {
  const id = input.id || randomUUID();
  const fromEmail = input.from.email.trim();
  const category = input.category ?? "TRANSACTIONAL";
  const marketing = category !== "TRANSACTIONAL";
  const needsLinks = input.linkMarkers !== undefined || (marketing && input.listUnsubscribe === undefined);
  const recipient =
    links && input.contactId && needsLinks ? recipientLinks(links.tokens, links.publicUrl, projectId, input.contactId, id) : undefined;
  const markers = recipient ? input.linkMarkers : undefined;
  const subject = markers && recipient ? withRecipientLinks(input.subject, markers, recipient) : input.subject;
  const linked = markers && recipient ? withRecipientLinks(input.html, markers, recipient) : input.html;
  const html = links ? withTracking(linked, { ...links, choice: trackingChoiceOf(links.mode, marketing), projectId, emailId: id }) : linked;
  const listUnsubscribe = input.listUnsubscribe ?? (marketing && recipient ? { url: recipient.unsubscribeUrl } : undefined);
  return {
    id,
    projectId,
    contactId: orNull(input.contactId),
    idempotencyKey: orNull(input.idempotencyKey),
    toEmail: normaliseAddress(input.to.email),
    toName: orNull(input.to.name),
    fromEmail,
    fromName: orNull(input.from.name),
    replyTo: input.replyTo ? normaliseAddress(input.replyTo.email) : null,
    subject,
    html,
    headers: input.headers ?? {},
    attachments: (input.attachments ?? []).map((attachment) => ({
      filename: attachment.filename,
      contentType: attachment.contentType,
      content: Buffer.from(attachment.content).toString("base64"),
    })),
    listUnsubscribe: listUnsubscribe
      ? { url: listUnsubscribe.url, ...(listUnsubscribe.mailto ? { mailto: listUnsubscribe.mailto } : {}) }
      : null,
    templateId: orNull(input.templateId),
    campaignId: orNull(input.campaignId),
    workflowId: orNull(input.workflowId),
    category,
    // Fixed now, on the sending domain, and sent unchanged by every attempt: a receiver can tell a resend.
    messageId: `<${id}@${domainOfAddress(fromEmail)}>`,
    traceParent: currentTraceParent(),
  };
}

/**
 * The send queue's front door: an email is validated, checked against the project's
 * suppressions, and stored as PENDING, or claimed by this process's dispatcher (store). Storing
 * the row is the whole acknowledgement: a dispatcher finds it there, whatever happens to this
 * process afterwards.
 */
export function createEmails(deps: {
  db: Db;
  pool: pg.Pool;
  /** The keyed hash suppressions are looked up by. */
  addressHash: AddressHash;
  nudgeDispatcher?: () => void;
  /** This process's dispatcher, which takes urgent emails as they are stored while it has room (EnqueueClaims). */
  claims?: EnqueueClaims;
  links?: EmailLinks;
  /** SEND_ATTACHMENTS_MAX_BYTES; unset: SPEC.md's 10 MB. */
  attachmentMaxBytes?: number;
}) {
  const { db } = deps;
  // Concurrent enqueues (of /v1/send above all) are stored together: one statement and one commit for many calls.
  const inserts = createGroupCommit<NewEmailRow[], StoredOrRefused>({
    writeBatch: (calls) => storeWithinCaps(deps.pool, calls),
    writeAlone: async (rows) => (await storeWithinCaps(deps.pool, [rows]))[0] as StoredOrRefused,
  });

  // Concurrent checks (of /v1/send above all) share one statement; each call looks for its own answers in the batch's.
  const standingChecks = createGroupCommit<StandingsAsked, Standings>({
    async writeBatch(calls) {
      const found = await standingsOf(deps.pool, deps.addressHash, {
        projectIds: calls.flatMap((call) => call.projectIds ?? []),
        recipients: calls.flatMap((call) => call.recipients ?? []),
        pairs: calls.flatMap((call) => call.pairs ?? []),
      });
      return calls.map(() => found);
    },
    writeAlone: (asked) => standingsOf(deps.pool, deps.addressHash, asked),
  });

  /**
   * What a send asks before its writes, in one statement: whether the project is suspended, which of the addresses
   * it no longer sends to, and, given a category, how much of the category's monthly cap is used. The send refuses
   * on the answer with refuseSuspended, refuseSuppressed and refuseOverCap, each where its check belongs.
   */
  function standingOf(projectId: string, addresses: readonly string[], category?: EmailCategory): Promise<Standings> {
    return standingChecks.write({
      projectIds: [projectId],
      recipients: addresses.map((address) => ({ projectId, toEmail: normaliseAddress(address) })),
      pairs: category ? [{ projectId, category }] : [],
    });
  }

  /**
   * Stores the emails together or not at all, in order: every one is checked (shape, then
   * suppressions) before the first is written.
   */
  async function enqueueAll(
    projectId: string,
    inputs: readonly EmailInput[],
    options: { suppressionsChecked?: boolean; suspensionChecked?: boolean } = {},
  ): Promise<Array<{ id: string; created: boolean }>> {
    requireProjectId(projectId);
    for (const input of inputs) {
      const violations = emailInputViolations(input, deps.attachmentMaxBytes);
      const [first] = violations;
      if (first) throw validationFailed(`Invalid ${first.field}: it ${first.message}`, violations);
    }
    const links = deps.links ? { ...deps.links, mode: await deps.links.modeOf(projectId) } : undefined;
    const rows = inputs.map((input) => rowOf(projectId, input, links));
    // A caller that asked first (/v1/send, before its own writes) saves the question. A suspension that lands between
    // its question and this store is met as one landing just after the store: the dispatcher holds the mail.
    if (!options.suspensionChecked || !options.suppressionsChecked) {
      const addresses = rows.map((row) => row.toEmail);
      const standings = await standingChecks.write({
        projectIds: options.suspensionChecked ? [] : [projectId],
        recipients: options.suppressionsChecked ? [] : addresses.map((toEmail) => ({ projectId, toEmail })),
      });
      refuseSuspended(standings, projectId);
      refuseSuppressed(standings, projectId, addresses);
    }
    const results = await store(rows);
    if (results.some((result) => result.created && !result.claimed)) deps.nudgeDispatcher?.();
    return results;
  }

  const storedOrThrow = (results: StoredOrRefused): StoredEmail[] => {
    if ("exceeded" in results) throw capReached(results.exceeded);
    return results;
  };

  /**
   * Stores the rows, the urgent ones claimed by this process's dispatcher as far as it has room: it sends those at once,
   * without a claim's statement and the row's third version (docs/decisions.md "Urgent emails are stored claimed").
   */
  async function store(rows: NewEmailRow[]): Promise<StoredEmail[]> {
    const urgent = rows.filter((row) => laneOf(row.category) === "urgent").length;
    const reservation = deps.claims && urgent > 0 ? deps.claims.reserve(urgent) : noClaims;
    if (reservation.count === 0) return storedOrThrow(await inserts.write(rows));
    const marked: NewEmailRow[] = [];
    let unmarked = reservation.count;
    for (const row of rows) {
      const claimed = unmarked > 0 && laneOf(row.category) === "urgent";
      if (claimed) unmarked--;
      marked.push(claimed ? { ...row, leaseMs: reservation.leaseMs } : row);
    }
    let results: StoredEmail[] = [];
    try {
      results = storedOrThrow(await inserts.write(marked));
    } finally {
      reservation.settle(
        marked.flatMap((row, index) => {
          const claimed = results[index]?.claimed;
          return claimed ? [claimedRowOf(row, claimed)] : [];
        }),
      );
    }
    return results;
  }

  return {
    async enqueue(projectId: string, input: EmailInput): Promise<{ id: string; created: boolean }> {
      const [result] = await enqueueAll(projectId, [input]);
      if (!result) throw new Error("enqueueAll answered no email");
      return result;
    },

    enqueueAll,

    standingOf,

    /** Which of these (project, lower-case address) pairs are suppressed, as `project address` strings. */
    suppressedAmong: async (rows: Array<{ projectId: string; toEmail: string }>): Promise<Set<string>> =>
      (await standingChecks.write({ recipients: rows })).suppressed,

    async get(projectId: string, id: string): Promise<EmailRow> {
      const row = isId(id) ? await findEmail(db, requireProjectId(projectId), id) : null;
      if (!row) throw emailNotFound();
      return row;
    },
  };
}
