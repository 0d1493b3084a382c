import type { Metrics } from "@herald/platform";
import type pg from "pg";
import { readQueueDepth } from "../db/queue-depth.js";
import { lanes } from "../domain/lanes.js";

/**
 * `herald_email_queue_depth{state,lane}` (due, scheduled, sending; urgent, bulk) and
 * `herald_email_queue_oldest_due_age_seconds{lane}`: the send queue, read at scrape time. A due backlog and an
 * oldest age that keep growing mean the dispatchers cannot keep up, or the relay refuses; scheduled emails wait
 * for a retry and are not late. The urgent lane (transactional and workflow mail) should never be more than a
 * claim behind, however deep the bulk lane (campaigns) is: the chart alerts past 10 s (HeraldUrgentMailLate).
 */
export function observeEmailQueue(metrics: Metrics, pool: pg.Pool): void {
  metrics.observe({
    reader: "email queue",
    gauges: {
      herald_email_queue_depth: {
        help: "Unsent emails by state (due, scheduled for a retry's time, sending) and lane (urgent, bulk)",
        labelNames: ["state", "lane"],
      },
      herald_email_queue_oldest_due_age_seconds: {
        help: "How long the oldest due PENDING email of the lane has waited for a dispatcher",
        labelNames: ["lane"],
      },
    },
    read: async () => {
      const depth = await readQueueDepth(pool);
      return {
        herald_email_queue_depth: lanes.flatMap((lane) => [
          { labels: { state: "due", lane }, value: depth[lane].due },
          { labels: { state: "scheduled", lane }, value: depth[lane].scheduled },
          { labels: { state: "sending", lane }, value: depth[lane].sending },
        ]),
        herald_email_queue_oldest_due_age_seconds: lanes.map((lane) => ({ labels: { lane }, value: depth[lane].oldestDueAgeSeconds })),
      };
    },
  });
}
