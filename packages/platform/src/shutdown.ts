import { ConfigError } from "./config.js";
import type { Logger } from "./logger.js";

/**
 * Runs the given steps once, in order, on SIGTERM or SIGINT, then exits. A second
 * signal while shutting down exits at once. Installs exitOnUncaughtErrors too: every process calls this.
 */
export function onShutdown(logger: Logger, steps: Array<() => Promise<void>>, timeoutMs = 15_000): void {
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
    for (const step of steps) {
      try {
        await step();
      } catch (error) {
        logger.error({ err: error }, "shutdown step failed");
      }
    }
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
    try {
      logger.fatal({ err: error, origin }, "an error reached the process: its state may be corrupt, exiting");
    } finally {
      process.exit(1);
    }
  };
  process.on("uncaughtException", (error, origin) => fatal(error, origin));
  process.on("unhandledRejection", (reason) => fatal(reason, "unhandledRejection"));
}
