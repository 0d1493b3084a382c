import type { Logger } from "./logger.js";

/**
 * What a pass tells the loop to do next:
 * - `"idle"` (or nothing): sleep `idleMs`, with jitter, or until nudged;
 * - `"busy"`: more work is waiting, run the next pass at once;
 * - a number: sleep that many milliseconds, or until nudged;
 * - `"done"`: the loop has finished its work and ends (a start-up that succeeded).
 */
export type PassOutcome = "idle" | "busy" | "done" | number;

export interface BackgroundLoopOptions {
  /** Names the loop in its log lines. */
  name: string;
  logger: Logger;
  /**
   * One unit of work. The signal aborts on stop(): a long pass should pass it on or check
   * it between steps; stop() waits for the pass either way (that is the drain).
   */
  pass: (signal: AbortSignal) => Promise<PassOutcome | undefined> | PassOutcome | undefined;
  /** How long an idle loop sleeps between passes. */
  idleMs: number;
  /** Each sleep is stretched or shrunk by up to this fraction at random, so that replicas drift apart. Default 0.1. */
  jitter?: number;
  /**
   * After a failed pass the loop waits idleMs × 2^(failures−1), at most this long (or idleMs, if longer);
   * nudges do not cut it short. Default 10 s.
   */
  maxBackoffMs?: number;
  /** The first failure is logged, and then every Nth in a row. Default 20. */
  logEveryFailures?: number;
  /**
   * While nudges keep coming, a pass starts at most this often: what arrives meanwhile is
   * handled in one pass instead of many. A nudge after a quiet spell still runs at once. Default 0.
   */
  minIntervalMs?: number;
  /** A failure the loop cannot outlive: the loop ends, and `finished` rejects with it. Default: none is. */
  isFatal?: (error: unknown) => boolean;
}

export interface BackgroundLoop {
  /** Starts the first pass now; a second call does nothing. */
  start(): void;
  /** Runs the next pass without waiting out the current sleep (a pass under way is followed at once by another). */
  nudge(): void;
  /** Ends the loop: aborts the signal, cuts the sleep short and waits for the pass under way. */
  stop(): Promise<void>;
  /** Settles when the loop ends: after stop(), after a pass answered "done", or (rejected) after a fatal failure. */
  readonly finished: Promise<void>;
  /** Failed passes in a row; 0 once a pass succeeds. */
  readonly failures: number;
}

/**
 * The one shape of every background worker of Herald (send queue, outbox relay, job worker,
 * domain checks, segment schedules, consumers that retry their start): run a pass, then
 * sleep until the next is due or a nudge arrives, back off after failures, and stop through
 * an AbortSignal without abandoning the pass under way.
 */
export function createBackgroundLoop(options: BackgroundLoopOptions): BackgroundLoop {
  const { logger, name } = options;
  const jitter = options.jitter ?? 0.1;
  const maxBackoffMs = Math.max(options.maxBackoffMs ?? 10_000, options.idleMs);
  const logEvery = options.logEveryFailures ?? 20;
  const minIntervalMs = options.minIntervalMs ?? 0;
  const stopping = new AbortController();
  let started = false;
  let failures = 0;
  let nudged = false;
  /** Ends the current sleep; unset while a pass runs. */
  let wake: (() => void) | undefined;
  /** Sleeping out minIntervalMs or a backoff: a nudge does not cut it short, a stop does. */
  let deaf = false;
  let settle: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  const finished = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // A loop nobody awaits must not turn a fatal failure into an unhandled rejection.
  finished.catch(() => {});
  let running: Promise<void> | undefined;

  const jittered = (ms: number) => (jitter > 0 ? Math.max(0, Math.round(ms * (1 + jitter * (2 * Math.random() - 1)))) : ms);

  function sleep(ms: number): Promise<void> {
    if (ms <= 0 || stopping.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });
  }

  async function sleepDeaf(ms: number): Promise<void> {
    deaf = true;
    await sleep(ms);
    deaf = false;
  }

  async function run(): Promise<void> {
    let lastStart = Number.NEGATIVE_INFINITY;
    for (;;) {
      const spacingLeft = lastStart + minIntervalMs - performance.now();
      if (spacingLeft > 0) await sleepDeaf(spacingLeft);
      if (stopping.signal.aborted) return;
      nudged = false;
      lastStart = performance.now();
      let waitMs = 0;
      try {
        const outcome = (await options.pass(stopping.signal)) ?? "idle";
        if (failures > 0) logger.info({ loop: name, afterFailures: failures }, `${name} recovered`);
        failures = 0;
        if (outcome === "done") return;
        waitMs = outcome === "busy" ? 0 : outcome === "idle" ? jittered(options.idleMs) : outcome;
        if (outcome === "busy") lastStart = Number.NEGATIVE_INFINITY; // a backlog is worked off without spacing
      } catch (error) {
        if (options.isFatal?.(error)) throw error;
        failures++;
        if (failures === 1 || failures % logEvery === 0) logger.warn({ err: error, loop: name, failures }, `${name} failed; retrying`);
        await sleepDeaf(jittered(Math.min(options.idleMs * 2 ** (failures - 1), maxBackoffMs)));
      }
      if (stopping.signal.aborted) return;
      if (waitMs > 0 && !nudged) await sleep(waitMs);
      // Let I/O callbacks in between passes that find work every time.
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  return {
    start() {
      if (started) return;
      started = true;
      running = run().then(
        () => settle?.resolve(),
        (error: unknown) => {
          logger.error({ err: error, loop: name }, `${name} stopped on a failure it cannot retry`);
          settle?.reject(error);
        },
      );
    },
    nudge() {
      nudged = true;
      if (!deaf) wake?.();
    },
    async stop() {
      stopping.abort();
      wake?.();
      if (!started) settle?.resolve();
      await running;
    },
    finished,
    get failures() {
      return failures;
    },
  };
}
