import { withConnection } from "@herald/db";
import { type BackgroundLoop, contextOfTraceParent, createBackgroundLoop, type Logger, type PassOutcome } from "@herald/platform";
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type pg from "pg";
import type { Db } from "../db/client.js";
import { claimDueEmails, type EmailRow, type HeldEmail, releaseEmails, unsentSince } from "../db/emails.js";
import { noStandings, standingsOf } from "../db/standings.js";
import { heldForSuspensionMs } from "../db/suspended-projects.js";
import type { AddressHash } from "../domain/address-hash.js";
import { isDestinationDeferral } from "../domain/destinations.js";
import { domainOfAddress } from "../domain/email-input.js";
import { bulkAllowance, firstBulkCursor, laneOf, nextBulkCursor } from "../domain/lanes.js";
import { outgoingEmailOf } from "../domain/outgoing-email.js";
import {
  outcomeOfSendError,
  retryOrFail,
  type SendOutcome,
  sentOutcome,
  suppressedRecipientOutcome,
  unverifiedDomainOutcome,
} from "../domain/send-outcome.js";
import type { RetryPolicy } from "../domain/send-retry.js";
import { createKeyedTokenBuckets, createTokenBucket } from "../domain/token-bucket.js";
import type { DkimSigningKey, MailProvider } from "../providers/mail-provider.js";
import type { Destination, Destinations } from "./destinations.js";
import { createOutcomeWriter, outcomeWriteOf } from "./outcome-writer.js";
import { createSigningKeys, signingKeyOf } from "./signing-keys.js";

export interface DispatcherOptions {
  db: Db;
  /** Connections without Prisma, for the suppression checks and the signing keys. */
  pool: pg.Pool;
  /** The connection the claims are made on (createClaimsPool). */
  claimsPool: pg.Pool;
  /** The keyed hash suppressions are looked up and written by. */
  addressHash: AddressHash;
  /** The connection outcomes are recorded on (createOutcomesPool). */
  outcomesPool: pg.Pool;
  logger: Logger;
  /** Undefined when SMTP_URL is unset: the dispatcher then sends nothing and emails wait PENDING. */
  provider: MailProvider | undefined;
  /** Opens the domains' DKIM keys (DKIM_ENCRYPTION_KEY). */
  encryptionKey: Buffer;
  /** Emails handed to the provider at once by this dispatcher. */
  concurrency: number;
  /** Emails a second, all projects together, for this dispatcher. */
  ratePerSecond: number;
  /** Emails a second for one project, for this dispatcher. */
  projectRatePerSecond: number;
  /**
   * The share (0 to 1) of `concurrency` and of `ratePerSecond` that bulk (campaign) mail may not take: kept for the
   * urgent lane (transactional and workflow mail), so that an urgent email never waits for campaign sends to finish.
   */
  urgentShare: number;
  /** Each recipient domain's destination, its limits and its backoff (emails/destinations.ts). */
  destinations: Destinations;
  /** How long a claim lasts: an email still SENDING after it is claimed again by any dispatcher. */
  leaseMs: number;
  retry: RetryPolicy;
  /** How often an idle dispatcher looks for due emails (enqueues in this process wake it at once). */
  pollIntervalMs: number;
  /** Called after a transaction wrote to the outbox. */
  nudgeOutbox?: () => void;
  /** The envelope sender of an email (a return path of BOUNCE_DOMAIN); unset: its From address. */
  returnPathOf?: (emailId: string) => string;
  /** Told of each outcome once it is recorded: the metrics' counter. */
  onRecorded?: (outcome: SendOutcome) => void;
}

/**
 * What the enqueue path asks of its process's dispatcher to store urgent emails already claimed, which the
 * dispatcher then sends without a claim (docs/decisions.md "Urgent emails are stored claimed").
 */
export interface EnqueueClaims {
  /**
   * Room for up to `count` urgent emails about to be stored to be stored claimed: as many as this dispatcher has free
   * slots and tokens for while no urgent email waits in the queue before them; none after stop() or kill().
   */
  reserve(count: number): ClaimReservation;
}

export interface ClaimReservation {
  /** How many emails may be stored claimed. */
  readonly count: number;
  /** The lease they are stored with, as a claim gives it. */
  readonly leaseMs: number;
  /**
   * Called once the store is over, whatever its end: the reserved emails that were stored claimed, as stored, which
   * the dispatcher sends now. The rest of the reservation (a repeated idempotency key, a refused or failed store) is
   * given back.
   */
  settle(rows: EmailRow[]): void;
}

/** A reservation of nothing: the emails are stored PENDING. */
export const noClaims: ClaimReservation = { count: 0, leaseMs: 0, settle() {} };

/** A claimed email to put back untried, due again after `delayMs` (releaseEmails). */
const heldEmailOf = (row: EmailRow, delayMs: number): HeldEmail => ({
  projectId: row.projectId,
  id: row.id,
  createdAt: row.createdAt,
  delayMs,
});

/** How often a dispatcher looks again for the oldest month that holds unsent mail. */
const unsentMonthsCheckMs = 60_000;

export interface Dispatcher {
  start(): void;
  /** Looks for due emails now (after an enqueue). */
  nudge(): void;
  /** Stops claiming, lets the sends in flight finish and records their outcomes. */
  stop(): Promise<void>;
  /**
   * Stops as a killed process would: no more claims, and the sends in flight are abandoned
   * without recording anything, so their emails stay SENDING until their lease lapses. For tests.
   */
  kill(): void;
  /** Emails handed to the provider and not yet recorded. */
  readonly inFlight: number;
  readonly enqueueClaims: EnqueueClaims;
}

/**
 * The send queue's worker, one per process; any number of replicas run together. It
 * claims due emails with a lease (claimDueEmails), sends each through the provider with
 * the sending domain's DKIM key, and records the outcome and its email-activity event in
 * one transaction right after the provider answers. What it guarantees and what it does
 * not (at least once to the relay) is in docs/decisions.md "The email record is the queue".
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { db, logger, provider } = options;
  const global = createTokenBucket({ ratePerSecond: options.ratePerSecond });
  const projects = createKeyedTokenBuckets({ ratePerSecond: options.projectRatePerSecond });
  const bulkLimits = bulkAllowance(options);
  const bulk = createTokenBucket({ ratePerSecond: bulkLimits.ratePerSecond });
  const signingKeysOf = createSigningKeys({ pool: options.pool, encryptionKey: options.encryptionKey });
  const outcomes = createOutcomeWriter({
    pool: options.outcomesPool,
    logger,
    ...(options.nudgeOutbox ? { onWritten: options.nudgeOutbox } : {}),
  });
  const inFlight = new Set<Promise<void>>();
  /** The bulk lane's sends among inFlight. */
  let bulkInFlight = 0;
  let bulkCursor = firstBulkCursor;
  /** The months the claims read (unsentSince), looked up again every unsentMonthsCheckMs. */
  let unsentMonths = { since: new Date(0), checkedAt: Number.NEGATIVE_INFINITY };
  let loop: BackgroundLoop | undefined;
  let killed = false;
  let waitingForSlot = false;
  /** Slots given to emails being stored claimed (EnqueueClaims.reserve), until they are in flight or known not stored. */
  let reserved = 0;
  /** The last claim took every urgent email due: none waits in the queue before one enqueued now. */
  let urgentDrained = false;
  /** Emails stored claimed, between their store and their sends' start (dispatch's checks): stop() waits for them. */
  const handOffs = new Set<Promise<unknown>>();
  /** The emails stored claimed in this turn of the event loop, handed over together in the next (handOff). */
  let handing: EmailRow[] | undefined;

  /**
   * Sends one claimed email with its domain's key (undefined: the domain is not verified now), holding a slot of
   * its destination, which a temporary refusal backs off; never throws.
   */
  async function attempt(
    row: EmailRow,
    sender: MailProvider,
    key: DkimSigningKey | undefined,
    destination: Destination,
  ): Promise<SendOutcome> {
    let deferred = false;
    try {
      const domain = domainOfAddress(row.fromEmail);
      if (!key) return unverifiedDomainOutcome(domain);
      const result = await sender.send(outgoingEmailOf(row, domain, options.returnPathOf?.(row.id)), key, laneOf(row.category));
      return sentOutcome(result, new Date());
    } catch (error) {
      deferred = isDestinationDeferral(error);
      return outcomeOfSendError(error, options.retry, row.attempts);
    } finally {
      options.destinations.release(destination, deferred);
    }
  }

  const tracer = trace.getTracer("herald-delivery");

  /**
   * Runs an email's sending and recording in a span of the trace that enqueued it, so that the send, and through
   * the outbox row's headers the consumers of its event, join the trace of the /v1/send (or campaign) behind it.
   */
  function inTraceOf(row: EmailRow, work: () => Promise<void>): Promise<void> {
    if (!row.traceParent) return work();
    return tracer.startActiveSpan(
      "email send",
      { kind: SpanKind.CLIENT, attributes: { "herald.email.id": row.id, "herald.email.attempt": row.attempts } },
      contextOfTraceParent(row.traceParent),
      async (span) => {
        try {
          await work();
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
          throw error;
        } finally {
          span.end();
        }
      },
    );
  }

  /** Records an outcome and its event; resolves once written (or given up on). */
  const record = async (row: EmailRow, outcome: SendOutcome): Promise<void> => {
    await outcomes.record(outcomeWriteOf(row, outcome, options.addressHash));
    options.onRecorded?.(outcome);
  };

  function track(row: EmailRow, work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => logger.error({ err: error }, "email dispatch failed"));
    const isBulk = laneOf(row.category) === "bulk";
    if (isBulk) bulkInFlight++;
    inFlight.add(tracked);
    void tracked.finally(() => {
      inFlight.delete(tracked);
      if (isBulk) bulkInFlight--;
      // The loop waits for slots while all are taken (or all of bulk mail's): it claims again once half are free, in one statement.
      if (waitingForSlot && (inFlight.size <= options.concurrency / 2 || bulkInFlight <= bulkLimits.concurrency / 2)) loop?.nudge();
    });
  }

  /**
   * Sends or records the claimed rows, and puts back those held for their project's rate or their destination; answers
   * how many were held. Rows stored claimed a moment ago were checked for suppressions and suspensions by their enqueue
   * (`checked`); one suppressed or suspended since then is met as if it had been just after the send.
   */
  async function dispatch(rows: EmailRow[], sender: MailProvider, checked = false): Promise<{ held: number; soonestMs: number }> {
    const [{ suppressed, suspended }, keys, destinations] = await Promise.all([
      checked
        ? noStandings
        : standingsOf(options.pool, options.addressHash, { projectIds: rows.map((row) => row.projectId), recipients: rows }),
      signingKeysOf(rows).catch((error: unknown) => {
        logger.warn({ err: error }, "cannot load the sending domains' keys");
        return undefined;
      }),
      Promise.all(rows.map((row) => options.destinations.of(row.toEmail))),
    ]);
    const held: HeldEmail[] = [];
    const holdBack = (row: EmailRow, delayMs: number) => {
      held.push(heldEmailOf(row, Math.max(delayMs, 10)));
      global.refund(1);
      if (laneOf(row.category) === "bulk") bulk.refund(1);
    };
    // A suspended project's emails are put back untried, out of reach until the operator re-enables it.
    const suspendedHeld: HeldEmail[] = [];
    for (const [index, row] of rows.entries()) {
      if (suspended.has(row.projectId)) {
        suspendedHeld.push(heldEmailOf(row, heldForSuspensionMs));
        global.refund(1);
        if (laneOf(row.category) === "bulk") bulk.refund(1);
        continue;
      }
      if (suppressed.has(`${row.projectId} ${row.toEmail}`)) {
        track(
          row,
          inTraceOf(row, () => record(row, suppressedRecipientOutcome(row.toEmail))),
        );
        continue;
      }
      const bucket = projects.bucket(row.projectId);
      if (bucket.take(1) === 0) {
        holdBack(row, bucket.msUntilNext());
        continue;
      }
      if (!keys) {
        const domain = domainOfAddress(row.fromEmail);
        track(row, record(row, retryOrFail(options.retry, row.attempts, `cannot load the DKIM key of ${domain}`)));
        continue;
      }
      // Mail to a destination at its limits, or backed off after a temporary refusal, waits without an attempt counted.
      const destination = destinations[index] as Destination;
      const slot = options.destinations.acquire(destination);
      if (!slot.ok) {
        bucket.refund(1);
        holdBack(row, slot.waitMs);
        continue;
      }
      track(
        row,
        inTraceOf(row, async () => {
          const outcome = await attempt(row, sender, signingKeyOf(keys, row), destination);
          if (!killed) await record(row, outcome);
        }),
      );
    }
    await releaseEmails(db, [...held, ...suspendedHeld]);
    return { held: held.length, soonestMs: Math.min(...held.map((email) => email.delayMs)) };
  }

  /**
   * One claim and its sends: as many emails as there are free slots and tokens, bulk mail within its allowance
   * (domain/lanes.ts), and what comes next.
   */
  async function claimAndDispatch(sender: MailProvider): Promise<PassOutcome> {
    const slots = options.concurrency - inFlight.size - reserved;
    const bulkSlots = Math.min(slots, bulkLimits.concurrency - bulkInFlight);
    waitingForSlot = slots <= 0 || bulkSlots <= 0;
    if (slots <= 0) return options.pollIntervalMs * 4;
    if (Date.now() - unsentMonths.checkedAt >= unsentMonthsCheckMs) {
      unsentMonths = { since: await withConnection(options.pool, (client) => unsentSince(client)), checkedAt: Date.now() };
    }
    const granted = global.take(slots);
    if (granted === 0) return Math.max(global.msUntilNext(), 1);
    const bulkGranted = bulk.take(Math.max(0, Math.min(granted, bulkSlots)));
    const rows = await claimDueEmails(
      options.claimsPool,
      options.leaseMs,
      granted,
      { limit: bulkGranted, cursor: bulkCursor },
      unsentMonths.since,
    );
    const bulkRows = rows.filter((row) => laneOf(row.category) === "bulk");
    global.refund(granted - rows.length);
    bulk.refund(bulkGranted - bulkRows.length);
    bulkCursor = nextBulkCursor(bulkCursor, [...new Set(bulkRows.map((row) => row.projectId))]);
    // Fewer rows than it asked for: the claim took everything due (the bulk lane's within its allowance).
    urgentDrained = rows.length < granted;
    // Killed: the claimed rows stay SENDING, as a dead process leaves them. Stopping: they are sent and recorded first.
    if (killed) return "done";
    if (rows.length === 0) return "idle";
    const { held, soonestMs } = await dispatch(rows, sender);
    // Every email held back (its destinations at their limits): claiming again at once would only put back the next ones.
    if (held === rows.length) return soonestMs;
    // A full claim means more may be due, and so may bulk mail that a project's share left behind: go again at once
    // (a slot or a token permitting). A claim that found nothing waits for a nudge or the poll.
    return rows.length === granted || bulkRows.length > 0 ? "busy" : "idle";
  }

  /**
   * Sends emails stored claimed on a reservation, those of a turn of the event loop together (the enqueues of one stored
   * batch settle in the same turn), so that their signing keys are read in one statement; after stop(), puts them back
   * untried, due at once for any dispatcher.
   */
  function handOff(rows: EmailRow[]): void {
    if (rows.length === 0) return;
    if (killed) {
      reserved -= rows.length;
      return;
    }
    if (handing) {
      handing.push(...rows);
      return;
    }
    const gathered = [...rows];
    handing = gathered;
    const handed = (async () => {
      await new Promise((resolve) => setImmediate(resolve));
      handing = undefined;
      try {
        if (killed) return;
        if (!loop || !provider) {
          await releaseEmails(
            db,
            gathered.map((row) => heldEmailOf(row, 0)),
          );
          return;
        }
        // Sent outside the enqueuing calls' context, as a claim's are: each send joins its email's trace (inTraceOf) itself.
        await context.with(ROOT_CONTEXT, () => dispatch(gathered, provider, true));
      } finally {
        // Their slots stay reserved until dispatch has taken them in flight (or put them back), so that no claim takes them.
        reserved -= gathered.length;
      }
    })();
    const tracked = handed.catch((error: unknown) => logger.error({ err: error }, "emails stored claimed could not be dispatched"));
    handOffs.add(tracked);
    void tracked.finally(() => handOffs.delete(tracked));
  }

  const enqueueClaims: EnqueueClaims = {
    reserve(count) {
      if (!loop || killed || !urgentDrained) return noClaims;
      const taken = global.take(Math.max(0, Math.min(count, options.concurrency - inFlight.size - reserved)));
      reserved += taken;
      // The rest are stored PENDING: no email enqueued after them may pass them until a claim has taken them.
      if (taken < count) urgentDrained = false;
      if (taken === 0) return noClaims;
      let settled = false;
      return {
        count: taken,
        leaseMs: options.leaseMs,
        settle(rows) {
          if (settled) return;
          settled = true;
          // What was not stored claimed is given back now; the rest when it is handed over (handOff).
          reserved -= taken - rows.length;
          global.refund(taken - rows.length);
          handOff(rows);
        },
      };
    },
  };

  return {
    enqueueClaims,
    start() {
      if (loop) return;
      if (!provider) {
        logger.warn("SMTP_URL is not set: no email is sent; enqueued emails wait PENDING until a delivery process with SMTP_URL runs");
        return;
      }
      killed = false;
      loop = createBackgroundLoop({
        name: "email dispatcher",
        logger,
        idleMs: options.pollIntervalMs,
        pass: () => claimAndDispatch(provider),
      });
      loop.start();
    },
    nudge() {
      loop?.nudge();
    },
    async stop() {
      const stopping = loop;
      loop = undefined;
      await stopping?.stop();
      await Promise.all(handOffs);
      await Promise.all(inFlight);
    },
    kill() {
      killed = true;
      outcomes.abandon();
      const killing = loop;
      loop = undefined;
      void killing?.stop();
    },
    get inFlight() {
      return inFlight.size;
    },
  };
}
