import {
  Counter,
  createBackgroundLoop,
  type Logger,
  type Metrics,
  OutboundAborted,
  type OutboundCaller,
  OutboundRefused,
} from "@herald/platform";
import type { Db } from "../db/client.js";
import { markEndpointFailed, markEndpointSucceeded } from "../db/endpoints.js";
import {
  type Attempt,
  type AttemptOutcome,
  type AttemptRecord,
  type ClaimedMessage,
  claimDueMessages,
  recordAttempts,
  releaseLapsedLeases,
} from "../db/messages.js";
import { nextAttemptAfter } from "../domain/retry-schedule.js";
import type { DisabledEndpoint } from "./admin-notice.js";
import { signatureHeaders } from "./signing.js";

/** What an attempt records of the answer's body. */
const recordedResponseBytes = 1_024;
const firstCursor = "00000000-0000-0000-0000-000000000000";
/** Attempts recorded in one statement at most. */
const maxRecordBatch = 200;
/** While calls keep settling, how often the dispatcher claims again. */
const claimIntervalMs = 10;
/** How often the dispatcher looks for messages whose process died mid-call. */
const lapsedLeaseCheckMs = 5_000;

export interface DispatcherOptions {
  timeoutMs: number;
  schedule: readonly number[];
  disableAfterMs: number;
  endpointConcurrency: number;
  concurrency: number;
  idleMs: number;
}

export interface Dispatcher {
  start(): void;
  nudge(): void;
  /** Stops claiming and waits for the calls under way (each ends by its deadline). */
  stop(): Promise<void>;
}

/** Why an attempt got no answer, in the words the attempts list shows. */
function errorOf(error: unknown, deadline: AbortSignal, timeoutMs: number): string {
  if (deadline.aborted || error instanceof OutboundAborted) return `timeout after ${timeoutMs} ms`;
  if (error instanceof OutboundRefused) {
    // request-filtering-agent says "… is not allowed. Because, It is private IP address." (or "meta IP address").
    return /private|meta IP/i.test(error.message) ? `refused: private address (${error.message})` : `refused: ${error.message}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * Delivers queued messages: claims due ones in turns across endpoints (claimDueMessages: at most
 * `endpointConcurrency` in flight per endpoint, across replicas), at most `concurrency` calls in flight in this
 * process, each call signed and bounded by one deadline. 2xx delivers; anything else (a 3xx included: redirects are
 * not followed) is retried on the schedule, and fails after its last entry. An endpoint failing every attempt for
 * `disableAfterMs` is disabled and its admins told.
 */
export function createDispatcher(deps: {
  db: Db;
  logger: Logger;
  caller: OutboundCaller;
  notifyDisabled: (endpoint: DisabledEndpoint) => Promise<void>;
  metrics?: Metrics;
  options: DispatcherOptions;
}): Dispatcher {
  const { db, logger, caller, options } = deps;
  const registers = deps.metrics ? [deps.metrics.registry] : [];
  const attempts = new Counter({
    name: "herald_webhook_attempts_total",
    help: "Webhook delivery attempts by outcome (success, http_error, timeout, refused, network_error).",
    labelNames: ["outcome"],
    registers,
  });
  const deliveries = new Counter({
    name: "herald_webhook_deliveries_total",
    help: "Webhook messages settled, by outcome (delivered, failed).",
    labelNames: ["outcome"],
    registers,
  });
  const inFlight = new Set<Promise<void>>();
  let cursor = firstCursor;
  let lapsedLeasesCheckedAt = 0;
  // The lease outlives the call's deadline, so that no live call's message is claimed again.
  const leaseMs = options.timeoutMs + 30_000;

  /** Attempts waiting to be recorded: while one batch is written, those that settle meanwhile gather for the next. */
  const unrecorded: Array<{ record: AttemptRecord; done: () => void; failed: (error: unknown) => void }> = [];
  let writing = false;

  async function writeUnrecorded(): Promise<void> {
    if (writing) return;
    writing = true;
    try {
      // The attempts that settle in this turn of the event loop join the first batch.
      await new Promise((resolve) => setImmediate(resolve));
      while (unrecorded.length > 0) {
        const batch = unrecorded.splice(0, maxRecordBatch);
        try {
          await recordAttempts(
            db,
            batch.map((item) => item.record),
          );
          for (const item of batch) item.done();
        } catch (error) {
          for (const item of batch) item.failed(error);
        }
      }
    } finally {
      writing = false;
    }
  }

  /** Records an attempt with the others that settle about now; resolves once it is written. */
  function record(attempt: AttemptRecord): Promise<void> {
    return new Promise((done, failed) => {
      unrecorded.push({ record: attempt, done, failed });
      void writeUnrecorded();
    });
  }

  async function deliver(message: ClaimedMessage): Promise<void> {
    const body = JSON.stringify(message.payload);
    const at = new Date();
    const secrets = message.previousSecret ? [message.secret, message.previousSecret] : [message.secret];
    const headers = {
      "content-type": "application/json",
      "user-agent": "Herald-Webhooks/1",
      ...signatureHeaders(message.id, at, body, secrets),
    };
    const deadline = AbortSignal.timeout(options.timeoutMs);
    const started = performance.now();
    let attempt: Attempt;
    let outcomeLabel: string;
    try {
      const response = await caller.send(new URL(message.url), {
        method: "POST",
        headers,
        body,
        signal: deadline,
        maxBodyBytes: recordedResponseBytes,
      });
      const ok = response.status >= 200 && response.status < 300;
      outcomeLabel = ok ? "success" : "http_error";
      attempt = {
        at: at.toISOString(),
        statusCode: response.status,
        durationMs: Math.round(performance.now() - started),
        response: response.body,
        error: ok ? null : response.status >= 300 && response.status < 400 ? "redirects are not followed" : null,
      };
    } catch (error) {
      outcomeLabel = deadline.aborted ? "timeout" : error instanceof OutboundRefused ? "refused" : "network_error";
      attempt = {
        at: at.toISOString(),
        statusCode: null,
        durationMs: Math.round(performance.now() - started),
        response: "",
        error: errorOf(error, deadline, options.timeoutMs),
      };
    }
    attempts.inc({ outcome: outcomeLabel });
    const delivered = outcomeLabel === "success";
    let outcome: AttemptOutcome = { kind: "delivered" };
    if (!delivered) {
      const next = nextAttemptAfter(options.schedule, message.attemptCount + 1, Date.now());
      outcome = next ? { kind: "retry", at: next } : { kind: "failed" };
    }
    await record({ projectId: message.projectId, id: message.id, attempt, outcome });
    if (outcome.kind !== "retry") deliveries.inc({ outcome: outcome.kind });
    if (delivered) {
      if (message.endpointFailing) await markEndpointSucceeded(db, message.endpointId);
      return;
    }
    const disabled = await markEndpointFailed(db, message.endpointId, options.disableAfterMs);
    if (disabled) await deps.notifyDisabled({ endpointId: message.endpointId, ...disabled });
  }

  const loop = createBackgroundLoop({
    name: "webhook dispatcher",
    logger,
    idleMs: options.idleMs,
    // Each settled call nudges the loop: passes at most this often claim what several calls freed in one statement,
    // where a pass per call would spend a claim (the heaviest statement here) on every message.
    minIntervalMs: claimIntervalMs,
    pass: async (signal) => {
      const free = options.concurrency - inFlight.size;
      if (free <= 0 || signal.aborted) return "idle";
      if (Date.now() - lapsedLeasesCheckedAt >= lapsedLeaseCheckMs) {
        lapsedLeasesCheckedAt = Date.now();
        await releaseLapsedLeases(db);
      }
      const claimed = await claimDueMessages(db, { limit: free, endpointCap: options.endpointConcurrency, leaseMs, cursor });
      for (const message of claimed) {
        cursor = message.endpointId;
        const call: Promise<void> = deliver(message)
          .catch((error: unknown) => logger.error({ err: error, messageId: message.id }, "webhook attempt could not be recorded"))
          .finally(() => {
            inFlight.delete(call);
            loop.nudge();
          });
        inFlight.add(call);
      }
      return claimed.length > 0 && claimed.length === free ? "busy" : "idle";
    },
  });

  return {
    start: () => loop.start(),
    nudge: () => loop.nudge(),
    async stop() {
      await loop.stop();
      await Promise.allSettled([...inFlight]);
    },
  };
}
