import type { MessageInitShape } from "@bufbuild/protobuf";
import { type Client, ConnectError } from "@connectrpc/connect";
import { ErrorDetailSchema } from "@herald/proto/herald/common/v1/error_pb";
import type { EventsService, TrackEventRequestSchema, TrackEventResponse } from "@herald/proto/herald/contacts/v1/events_service_pb";
import { type Context, context } from "@opentelemetry/api";

export type TrackRequest = MessageInitShape<typeof TrackEventRequestSchema>;

export interface TrackCoalescer {
  /** Tracks one event; resolves or rejects exactly as a TrackEvent call of its own would. */
  track(request: TrackRequest): Promise<TrackEventResponse>;
}

interface Waiting {
  request: TrackRequest;
  trace: Context;
  resolve: (response: TrackEventResponse) => void;
  reject: (error: unknown) => void;
}

/**
 * Sends the /v1/track calls that arrive in the same turn of the event loop as one
 * TrackEvents RPC. A lone request goes out at once (no timer, no added latency);
 * under load, every request parsed in a turn shares one call, so the per-call cost
 * of the RPC stack (most of this path's CPU, see docs/benchmarks.md) is paid once per
 * batch instead of once per request. Each item fails on its own: its failure comes
 * back as the ConnectError a single call would have raised, so the HTTP answer is
 * the same. The batch RPC continues the trace of its first request.
 */
export function createTrackCoalescer(options: { events: Client<typeof EventsService>; maxBatch: number }): TrackCoalescer {
  let queue: Waiting[] = [];
  let scheduled = false;

  function flush(): void {
    scheduled = false;
    const batch = queue;
    queue = [];
    for (let start = 0; start < batch.length; start += options.maxBatch) send(batch.slice(start, start + options.maxBatch));
  }

  function send(batch: Waiting[]): void {
    const first = batch[0] as Waiting;
    context
      .with(first.trace, () => options.events.trackEvents({ events: batch.map((waiting) => waiting.request) }))
      .then(
        ({ results }) => {
          batch.forEach((waiting, index) => {
            const outcome = results[index]?.outcome;
            if (outcome?.case === "tracked") waiting.resolve(outcome.value);
            else if (outcome?.case === "failed") {
              const { code, message, detail } = outcome.value;
              waiting.reject(new ConnectError(message, code, undefined, detail ? [{ desc: ErrorDetailSchema, value: detail }] : []));
            } else waiting.reject(new Error("TrackEvents answered without a result for an item"));
          });
        },
        (error: unknown) => {
          for (const waiting of batch) waiting.reject(error);
        },
      );
  }

  return {
    track(request) {
      return new Promise((resolve, reject) => {
        queue.push({ request, trace: context.active(), resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
  };
}
