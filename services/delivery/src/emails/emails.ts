import { randomUUID } from "node:crypto";
import { createGroupCommit } from "@herald/db";
import { DomainError, validationFailed } from "@herald/errors";
import type pg from "pg";
import type { Db } from "../db/client.js";
import { type EmailRow, findEmail, insertEmails, type NewEmailRow, suppressedAmong } from "../db/emails.js";
import { domainOfAddress, type EmailInput, emailInputViolations, normaliseAddress } from "../domain/email-input.js";
import { isId, requireProjectId } from "../domain/ids.js";
import { type LinkTokens, recipientLinks } from "../links/link-tokens.js";
import { type TrackingMode, trackingChoiceOf, withTracking } from "../tracking/html-tracking.js";

export type Emails = ReturnType<typeof createEmails>;

const emailNotFound = () => new DomainError("not-found", "EMAIL_NOT_FOUND", "Email not found");

const orNull = (value: string | undefined): string | null => (value === undefined || value === "" ? null : value);

/** What the queue needs to give an email its links: the tokens, the gateway's address, the project's tracking mode. */
export interface EmailLinks {
  tokens: LinkTokens;
  publicUrl: string;
  modeOf(projectId: string): Promise<TrackingMode>;
}

/**
 * The row to store: the HTML with tracking when the mode asks for it, and marketing mail
 * with a one-click List-Unsubscribe to the recipient's page when the caller gave none.
 */
function rowOf(projectId: string, input: EmailInput, links: (EmailLinks & { mode: TrackingMode }) | undefined): NewEmailRow {
  const id = input.id || randomUUID();
  const fromEmail = input.from.email.trim();
  const category = input.category ?? "TRANSACTIONAL";
  const marketing = category !== "TRANSACTIONAL";
  const html = links
    ? withTracking(input.html, { ...links, choice: trackingChoiceOf(links.mode, marketing), projectId, emailId: id })
    : input.html;
  const listUnsubscribe =
    input.listUnsubscribe ??
    (marketing && links && input.contactId
      ? { url: recipientLinks(links.tokens, links.publicUrl, projectId, input.contactId, id).unsubscribeUrl }
      : undefined);
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
    subject: input.subject,
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
  };
}

/**
 * The send queue's front door: an email is validated, checked against the project's
 * suppressions, and stored as PENDING. Storing the row is the whole acknowledgement: the
 * dispatcher finds it there, whatever happens to this process afterwards.
 */
export function createEmails(deps: {
  db: Db;
  pool: pg.Pool;
  nudgeDispatcher?: () => void;
  links?: EmailLinks;
  /** SEND_ATTACHMENTS_MAX_BYTES; unset: SPEC.md's 10 MB. */
  attachmentMaxBytes?: number;
}) {
  const { db } = deps;
  // Concurrent enqueues (of /v1/send above all) are stored together: one statement and one commit for many calls.
  const inserts = createGroupCommit<NewEmailRow[], Array<{ id: string; created: boolean }>>({
    async writeBatch(calls) {
      const results = await insertEmails(deps.pool, calls.flat());
      let next = 0;
      return calls.map((rows) => {
        const first = next;
        next += rows.length;
        return results.slice(first, next);
      });
    },
    writeAlone: (rows) => insertEmails(deps.pool, rows),
  });

  // Concurrent checks (of /v1/send above all) share one query; each call looks for its own addresses in the answer.
  const suppressionChecks = createGroupCommit<Array<{ projectId: string; toEmail: string }>, Set<string>>({
    async writeBatch(calls) {
      const found = await suppressedAmong(deps.pool, calls.flat());
      return calls.map(() => found);
    },
    writeAlone: (rows) => suppressedAmong(deps.pool, rows),
  });

  /** RECIPIENT_SUPPRESSED for the first of the addresses the project no longer sends to. */
  async function refuseSuppressed(projectId: string, addresses: readonly string[]): Promise<void> {
    const normalised = addresses.map(normaliseAddress);
    const suppressed = await suppressionChecks.write(normalised.map((toEmail) => ({ projectId, toEmail })));
    const refused = normalised.find((address) => suppressed.has(`${projectId} ${address}`));
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
   * Stores the emails together or not at all, in order: every one is checked (shape, then
   * suppressions) before the first is written.
   */
  async function enqueueAll(
    projectId: string,
    inputs: readonly EmailInput[],
    options: { suppressionsChecked?: boolean } = {},
  ): Promise<Array<{ id: string; created: boolean }>> {
    requireProjectId(projectId);
    for (const input of inputs) {
      const violations = emailInputViolations(input, deps.attachmentMaxBytes);
      const [first] = violations;
      if (first) throw validationFailed(`Invalid ${first.field}: it ${first.message}`, violations);
    }
    const links = deps.links ? { ...deps.links, mode: await deps.links.modeOf(projectId) } : undefined;
    const rows = inputs.map((input) => rowOf(projectId, input, links));
    // A caller that refused suppressed recipients itself, before its own writes (/v1/send), saves the second query.
    if (!options.suppressionsChecked) {
      await refuseSuppressed(
        projectId,
        rows.map((row) => row.toEmail),
      );
    }
    const results = await inserts.write(rows);
    if (results.some((result) => result.created)) deps.nudgeDispatcher?.();
    return results;
  }

  return {
    async enqueue(projectId: string, input: EmailInput): Promise<{ id: string; created: boolean }> {
      const [result] = await enqueueAll(projectId, [input]);
      if (!result) throw new Error("enqueueAll answered no email");
      return result;
    },

    enqueueAll,

    refuseSuppressed,

    async get(projectId: string, id: string): Promise<EmailRow> {
      const row = isId(id) ? await findEmail(db, requireProjectId(projectId), id) : null;
      if (!row) throw emailNotFound();
      return row;
    },
  };
}
