import { ConnectError } from "@connectrpc/connect";
import { DomainError, errorDetailOf } from "@herald/errors";
import { type ErrorDetail, ErrorDetailSchema } from "@herald/proto/herald/common/v1/error_pb";
import { type Context, context } from "@opentelemetry/api";
import { toConnectError } from "./interceptors.js";
import type { Logger } from "./logger.js";

/** One item's error in a batch call: the fields of herald.common.v1.ItemFailure. */
export interface ItemFailureShape {
  code: number;
  message: string;
  detail?: ErrorDetail;
}

/** A direct caller may send at most this many items in one batch call. */
export const maxBatchItems = 1_000;

/**
 * One item of a batch call's answer, as the protos write it: a oneof `outcome` with the success
 * under the call's own case name (`tracked`, `sent`, `upserted`) and the error under `failed`.
 */
export interface ItemResult<Case extends string, T> {
  outcome: { case: Case; value: T } | { case: "failed"; value: ItemFailureShape };
}

/** An item as a caller reads it from an answer, where the oneof may also be unset. */
type ReadItemResult<T> = {
  outcome: { case: string; value: T } | { case: "failed"; value: ItemFailureShape } | { case: undefined; value?: undefined };
};

/**
 * Server side of a batch call (TrackEvents, SendEmails, UpsertContacts): every item runs at once as
 * its own call would, and an item's error becomes its failure, with the code and detail the single
 * call would have raised. More than maxBatchItems items refuse the whole call.
 */
export async function settleItems<T, R, const Case extends string>(
  items: readonly T[],
  handle: (item: T) => Promise<R>,
  options: { okCase: Case; logger: Logger; procedure: string },
): Promise<ItemResult<Case, R>[]> {
  if (items.length > maxBatchItems) {
    throw new DomainError("invalid-argument", "BATCH_TOO_LARGE", `At most ${maxBatchItems} items per call`);
  }
  const outcomes = await Promise.allSettled(items.map(handle));
  return outcomes.map((outcome) => {
    if (outcome.status === "fulfilled") return { outcome: { case: options.okCase, value: outcome.value } };
    const error = toConnectError(outcome.reason, options);
    return { outcome: { case: "failed", value: { code: error.code, message: error.rawMessage, detail: errorDetailOf(error) } } };
  });
}

/** The ConnectError a single call would have raised for this item failure. */
function itemFailureToConnect(failure: ItemFailureShape): ConnectError {
  const { code, message, detail } = failure;
  return new ConnectError(message, code, undefined, detail ? [{ desc: ErrorDetailSchema, value: detail }] : []);
}

interface Waiting<Req, Res> {
  request: Req;
  trace: Context;
  resolve: (response: Res) => void;
  reject: (error: unknown) => void;
}

/**
 * Client side of a batch call: the single calls made in the same turn of the event loop go out as
 * one batch call (in batches of at most `maxBatch`). A lone call goes out at once (no timer, no
 * added latency); under load every call of a turn shares one RPC, so the per-call cost of the RPC
 * stack (most of a hot path's CPU, see docs/benchmarks.md) is paid once per batch. Each call
 * resolves or rejects exactly as a call of its own would; a batch call that fails as a whole fails
 * each of its items with its error. The batch call continues the trace of its first item.
 */
export function createCoalescer<Req, Res>(options: {
  maxBatch: number;
  /** The batch call: its answer's results, one per request, in order. */
  call: (batch: Req[]) => Promise<ReadItemResult<Res>[]>;
}): (request: Req) => Promise<Res> {
  let queue: Waiting<Req, Res>[] = [];
  let scheduled = false;

  function send(batch: Waiting<Req, Res>[]): void {
    const first = batch[0] as Waiting<Req, Res>;
    context
      .with(first.trace, () => options.call(batch.map((waiting) => waiting.request)))
      .then(
        (results) => {
          batch.forEach((waiting, index) => {
            const outcome = results[index]?.outcome;
            if (outcome?.case === undefined) waiting.reject(new Error("a batch call answered without a result for an item"));
            else if (outcome.case === "failed") waiting.reject(itemFailureToConnect(outcome.value as ItemFailureShape));
            else waiting.resolve(outcome.value as Res);
          });
        },
        (error: unknown) => {
          for (const waiting of batch) waiting.reject(error);
        },
      );
  }

  function flush(): void {
    scheduled = false;
    const batch = queue;
    queue = [];
    for (let start = 0; start < batch.length; start += options.maxBatch) send(batch.slice(start, start + options.maxBatch));
  }

  return (request) =>
    new Promise((resolve, reject) => {
      queue.push({ request, trace: context.active(), resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
