import { createBackgroundLoop, type Logger } from "@herald/platform";
import type pg from "pg";

/** The channel the domains table's trigger notifies (migration sender_domain_changes): `<schema> <project id> <domain>`. */
export const senderDomainChannel = "herald_sender_domains";

/**
 * Hears, on a PostgreSQL connection of its own (LISTEN), every sending domain of this
 * schema that is deleted or stops being verified, whichever replica made the change:
 * the domains table's trigger notifies at commit. Reconnects with backoff; `onListening`
 * says when changes do and do not reach it, so that the caches it keeps fresh are trusted
 * only while they do.
 */
export function createSenderDomainListener(options: {
  /** A new, unconnected client on delivery's database. */
  connect: () => pg.Client;
  schema: string;
  logger: Logger;
  onGone: (projectId: string, domain: string) => void;
  onListening: (listening: boolean) => void;
}) {
  const { logger } = options;
  const loop = createBackgroundLoop({
    name: "sender domain listener",
    logger,
    idleMs: 1_000,
    maxBackoffMs: 10_000,
    logEveryFailures: 5,
    pass: async (signal) => {
      const client = options.connect();
      const ended = new Promise<void>((resolve) => {
        client.on("end", () => resolve());
        client.on("error", (error) => {
          logger.warn({ err: error }, "the connection listening for sender domain changes failed");
          resolve();
        });
      });
      client.on("notification", (message) => {
        if (message.channel !== senderDomainChannel || !message.payload) return;
        const [schema, projectId, domain] = message.payload.split(" ");
        if (schema === options.schema && projectId && domain) options.onGone(projectId, domain);
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${senderDomainChannel}`);
        options.onListening(true);
        logger.info("listening for sender domain changes");
        const stopped = new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
        await Promise.race([ended, stopped]);
        if (signal.aborted) return "done" as const;
        throw new Error("the connection listening for sender domain changes ended");
      } finally {
        options.onListening(false);
        await client.end().catch(() => {});
      }
    },
  });
  return {
    start: () => loop.start(),
    stop: () => loop.stop(),
  };
}
