import { Counter, type Metrics } from "@herald/platform";
import type { SendOutcome } from "../domain/send-outcome.js";

/**
 * `herald_email_dispatches_total{outcome}`: the attempts this process's dispatcher recorded, by the
 * email-activity event each published without its `email.` prefix (`sent`, `deferred`, `bounce`, `failed`).
 * Summed over the replicas it counts the queue's work; per process it shows how the replicas share it.
 */
export function observeDispatches(metrics: Metrics): { recorded: (outcome: SendOutcome) => void } {
  const dispatches = new Counter({
    name: "herald_email_dispatches_total",
    help: "Send attempts this process's dispatcher recorded, by outcome (the email-activity event without its email. prefix)",
    labelNames: ["outcome"],
    registers: [metrics.registry],
  });
  return { recorded: (outcome) => dispatches.inc({ outcome: outcome.event.replace(/^email\./, "") }) };
}
