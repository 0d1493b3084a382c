import { Counter, type Metrics } from "@herald/platform";
import type { SendOutcome } from "../domain/send-outcome.js";
import type { DestinationState } from "./destinations.js";

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

/**
 * The destinations' throttle state (docs/operations.md "Destinations"): `herald_email_destination_in_flight{destination}`
 * and `herald_email_destination_backoff_seconds{destination}` (how long it is still left alone after a temporary
 * refusal; 0 when it is not), read at scrape time, and the counters `herald_email_destination_deferrals_total{destination}`
 * (its 4xx refusals) and `herald_email_destination_held_total{destination,why}` (emails put back untried: `limit`, `backoff`).
 */
export function observeDestinations(metrics: Metrics): {
  onHeld: (destination: string, why: "limit" | "backoff") => void;
  onDeferred: (destination: string) => void;
  /** Reads the destinations' state at each scrape, once they exist. */
  watch: (states: () => DestinationState[]) => void;
} {
  const deferrals = new Counter({
    name: "herald_email_destination_deferrals_total",
    help: "Temporary refusals (4xx) a destination answered this process's dispatcher; each backs the destination off",
    labelNames: ["destination"],
    registers: [metrics.registry],
  });
  const held = new Counter({
    name: "herald_email_destination_held_total",
    help: "Emails this process's dispatcher put back untried for their destination: at its limits (limit) or backed off (backoff)",
    labelNames: ["destination", "why"],
    registers: [metrics.registry],
  });
  return {
    onHeld: (destination, why) => held.inc({ destination, why }),
    onDeferred: (destination) => deferrals.inc({ destination }),
    watch(states) {
      metrics.observe({
        reader: "email destinations",
        gauges: {
          herald_email_destination_in_flight: { help: "Sends to the destination under way in this process", labelNames: ["destination"] },
          herald_email_destination_backoff_seconds: {
            help: "How long the destination is still left alone after a temporary refusal; 0 when it is not backed off",
            labelNames: ["destination"],
          },
        },
        read: async () => {
          const current = states();
          return {
            herald_email_destination_in_flight: current.map((state) => ({ labels: { destination: state.name }, value: state.inFlight })),
            herald_email_destination_backoff_seconds: current.map((state) => ({
              labels: { destination: state.name },
              value: state.backoffSeconds,
            })),
          };
        },
      });
    },
  };
}
