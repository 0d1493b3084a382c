import { ConfigError } from "./config.js";
import type { Logger } from "./logger.js";

type ShutdownStep = () => Promise<void>;

/** A step longer than this is logged. */
const slowStepMs = 2_000;

/**
 * Runs the given steps once, in order, on SIGTERM or SIGINT, then exits. A group of steps (an array) runs together:
 * stopping a process's Kafka consumers one after the other costs a broker round trip each (a leave-group, a pending
 * fetch), which on a loaded machine added up to more than a rollout's grace. A second signal while shutting down
 * exits at once. Installs exitOnUncaughtErrors too: every process calls this.
 */
export function onShutdown(logger: Logger, steps: Array<ShutdownStep | ShutdownStep[]>, timeoutMs = 15_000): void {
  exitOnUncaughtErrors(logger);
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, "shutting down");
    const timer = setTimeout(() => {
      logger.error("shutdown took too long, exiting");
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    const run = async (step: ShutdownStep) => {
      try {
        await step();
      } catch (error) {
        logger.error({ err: error }, "shutdown step failed");
      }
    };
    const started = Date.now();
    for (const [index, step] of steps.entries()) {
      const stepStarted = Date.now();
      await (Array.isArray(step) ? Promise.all(step.map(run)) : run(step));
      // A rollout waits for the whole list: the log names the step (its place in the list) that held it up.
      const ms = Date.now() - stepStarted;
      if (ms > slowStepMs) logger.warn({ step: index, ms }, "a shutdown step was slow");
    }
    logger.info({ ms: Date.now() - started }, "shut down");
    process.exit(0);
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

/** Prints a start-up failure (bad config, unreachable database) and ends the process with status 1. */
export function exitOnStartupError(name: string, error: unknown): never {
  // A configuration error says all there is to say; anything else needs its stack to be found.
  let message = String(error);
  if (error instanceof ConfigError) message = error.message;
  else if (error instanceof Error) message = error.stack ?? error.message;
  process.stderr.write(`${name} failed to start: ${message}\n`);
  process.exit(1);
}

/**
 * An error that reaches the process (an uncaught exception, a rejection nobody handles) is logged as fatal and ends
 * the process with status 1 at once, without the shutdown steps: whatever threw left state half-changed, and a fresh
 * process (restarted by Kubernetes or `npm start`) is the only one known to be sound. No request's error gets here:
 * every listener answers its own (docs/decisions.md "A request's error never ends a process").
 */
export function exitOnUncaughtErrors(logger: Logger): void {
  const fatal = (error: unknown, origin: string) => {
    if (isLostDatabaseConnection(error)) {
      logger.warn({ err: error, origin }, "PostgreSQL ended a connection in use; the pool discards it");
      return;
    }
    try {
      logger.fatal({ err: error, origin }, "an error reached the process: its state may be corrupt, exiting");
    } finally {
      process.exit(1);
    }
  };
  process.on("uncaughtException", (error, origin) => fatal(error, origin));
  process.on("unhandledRejection", (reason) => fatal(reason, "unhandledRejection"));
}

/**
 * PostgreSQL ending a connection (a restart, a failover: 57P01 to 57P03) is raised as an 'error' event by a pg
 * connection that a transaction has checked out, which has no listener then. That is no corrupt state of this process:
 * the statement in progress fails on its own, and the pool discards the connection. So it is logged, not fatal; a
 * PostgreSQL restart must not end every process that happened to be inside a transaction.
 */
function isLostDatabaseConnection(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, severity } = error as Error & { code?: unknown; severity?: unknown };
  return (
    (severity === "FATAL" && typeof code === "string" && /^57P0[123]$/.test(code)) || error.message === "Connection terminated unexpectedly"
  );
}
