import { Code, ConnectError } from "@connectrpc/connect";
import { DomainError, errorDetailOf, validationFailed } from "@herald/errors";
import { describe, expect, it } from "vitest";
import { createCoalescer, maxBatchItems, settleItems } from "./batch-calls.js";
import { createLogger } from "./logger.js";

const logger = createLogger({ name: "batch-calls-test", level: "silent" });
const procedure = "/test.v1.TestService/DoThings";

/** A batch call's server side: items without an @ fail validation, as a single call would. */
const handle = async (email: string) => {
  if (!email.includes("@")) throw validationFailed("Invalid email", [{ field: "email", message: "bad", code: "invalid_email" }]);
  return { id: `id-${email}` };
};

describe("settleItems", () => {
  it("answers each item on its own, a failure with the code and detail its single call would raise", async () => {
    const [ok, failed] = await settleItems(["a@x.test", "broken"], handle, { okCase: "done", logger, procedure });
    expect(ok).toEqual({ outcome: { case: "done", value: { id: "id-a@x.test" } } });
    expect(failed).toMatchObject({
      outcome: { case: "failed", value: { code: Code.InvalidArgument, message: "Invalid email", detail: { code: "VALIDATION_ERROR" } } },
    });
  });

  it("hides an unexpected error's message, as the error interceptor does", async () => {
    const outcomes = await settleItems(
      ["x"],
      async () => {
        throw new Error("password=secret");
      },
      { okCase: "done", logger, procedure },
    );
    expect(outcomes[0]).toMatchObject({ outcome: { case: "failed", value: { code: Code.Internal, message: "internal error" } } });
  });

  it("refuses a batch of more than maxBatchItems items as a whole", async () => {
    const emails = Array.from({ length: maxBatchItems + 1 }, (_, index) => `${index}@x.test`);
    await expect(settleItems(emails, handle, { okCase: "done", logger, procedure })).rejects.toSatisfy(
      (error) => error instanceof DomainError && error.code === "BATCH_TOO_LARGE" && error.kind === "invalid-argument",
    );
  });
});

describe("createCoalescer", () => {
  function coalescerOver(calls: number[], options: { down?: boolean } = {}) {
    return createCoalescer<string, { id: string }>({
      maxBatch: 4,
      call: async (batch) => {
        calls.push(batch.length);
        if (options.down) throw new ConnectError("the service is down", Code.Unavailable);
        return settleItems(batch, handle, { okCase: "done", logger, procedure });
      },
    });
  }

  it("sends what arrives in one turn as one call, in batches of at most maxBatch, answering each item on its own", async () => {
    const calls: number[] = [];
    const call = coalescerOver(calls);
    const emails = ["a@x.test", "broken", "c@x.test", "d@x.test", "e@x.test", "also-broken"];
    const outcomes = await Promise.allSettled(emails.map(call));
    expect(calls).toEqual([4, 2]);
    outcomes.forEach((outcome, index) => {
      if (emails[index]?.includes("@")) {
        expect(outcome).toEqual({ status: "fulfilled", value: { id: `id-${emails[index]}` } });
        return;
      }
      expect(outcome.status).toBe("rejected");
      const error = (outcome as PromiseRejectedResult).reason as ConnectError;
      expect(error).toBeInstanceOf(ConnectError);
      expect(error.code).toBe(Code.InvalidArgument);
      expect(errorDetailOf(error)?.fieldViolations[0]).toMatchObject({ field: "email", code: "invalid_email" });
    });

    // A lone call later goes out alone.
    await call("late@x.test");
    expect(calls).toEqual([4, 2, 1]);
  });

  it("fails every item of a call that failed as a whole with that call's error", async () => {
    const call = coalescerOver([], { down: true });
    const outcomes = await Promise.allSettled(["1@x.test", "2@x.test"].map(call));
    for (const outcome of outcomes) expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: Code.Unavailable });
  });

  it("fails an item the batch call answered nothing for", async () => {
    const call = createCoalescer<string, string>({ maxBatch: 10, call: async () => [{ outcome: { case: "done", value: "first" } }] });
    const [first, second] = await Promise.allSettled(["a", "b"].map(call));
    expect(first).toEqual({ status: "fulfilled", value: "first" });
    expect(second?.status).toBe("rejected");
  });
});
