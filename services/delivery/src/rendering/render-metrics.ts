import type { Metrics } from "@herald/platform";
import type { RenderPool } from "@herald/rendering/pool";

/**
 * `herald_render_tasks_waiting`: renders waiting for a free render thread. Above zero for long, heavy templates (or
 * one tenant's heavy calls back to back) hold every thread, and sends wait for them: add threads or replicas.
 */
export function observeRenderPool(metrics: Metrics, renders: RenderPool): void {
  metrics.observe({
    reader: "render pool",
    gauges: { herald_render_tasks_waiting: { help: "Liquid renders and template checks waiting for a free render thread" } },
    read: async () => ({ herald_render_tasks_waiting: [{ value: renders.waiting() }] }),
  });
}
