import type { Metrics } from "@herald/platform";
import type pg from "pg";
import { readQueueDepth } from "../db/queue-depth.js";

/**
 * `herald_email_queue_depth{state}` (due, scheduled, sending) and `herald_email_queue_oldest_due_age_seconds`:
 * the send queue, read at scrape time. A due backlog and an oldest age that keep growing mean the dispatchers
 * cannot keep up, or the relay refuses; scheduled emails wait for a retry and are not late.
 */
export function observeEmailQueue(metrics: Metrics, pool: pg.Pool): void {
  metrics.observe({
    reader: "email queue",
    gauges: {
      herald_email_queue_depth: { help: "Unsent emails by state: due, scheduled (a retry's time) and sending", labelNames: ["state"] },
      herald_email_queue_oldest_due_age_seconds: { help: "How long the oldest due PENDING email has waited for a dispatcher" },
    },
    read: async () => {
      const depth = await readQueueDepth(pool);
      return {
        herald_email_queue_depth: [
          { labels: { state: "due" }, value: depth.due },
          { labels: { state: "scheduled" }, value: depth.scheduled },
          { labels: { state: "sending" }, value: depth.sending },
        ],
        herald_email_queue_oldest_due_age_seconds: [{ value: depth.oldestDueAgeSeconds }],
      };
    },
  });
}
