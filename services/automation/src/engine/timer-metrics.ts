import { Counter, type Metrics } from "@herald/platform";
import type { Db } from "../db/client.js";

/**
 * `herald_workflow_timers{state}`, the timers of waiting steps (DELAY, WAIT_FOR_EVENT's timeout) read at scrape
 * time: `due` have passed their time and wait for the step runner, `scheduled` have not; and
 * `herald_workflow_timers_fired_total`, the timers this process's runner fired. Due timers that stay above zero
 * mean the runner cannot keep up, or is not running.
 */
export function observeTimers(metrics: Metrics, db: Db): { fired: (count: number) => void } {
  const fired = new Counter({
    name: "herald_workflow_timers_fired_total",
    help: "Timers of waiting workflow steps this process fired",
    registers: [metrics.registry],
  });
  metrics.observe({
    reader: "workflow timers",
    gauges: {
      herald_workflow_timers: {
        help: "Timers of waiting workflow steps: due (time passed, not fired yet) or scheduled",
        labelNames: ["state"],
      },
    },
    read: async () => {
      const rows = await db.$queryRaw<Array<{ due: number; scheduled: number }>>`
        SELECT count(*) FILTER (WHERE run_at <= now())::int AS due, count(*) FILTER (WHERE run_at > now())::int AS scheduled
        FROM workflow_step_runs WHERE status = 'WAITING'`;
      return {
        herald_workflow_timers: [
          { labels: { state: "due" }, value: rows[0]?.due ?? 0 },
          { labels: { state: "scheduled" }, value: rows[0]?.scheduled ?? 0 },
        ],
      };
    },
  });
  return { fired: (count) => fired.inc(count) };
}
