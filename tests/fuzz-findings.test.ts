import { beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, signUp } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

/** What tests/fuzz.test.ts found answering 5xx, each kept as a test of its own. */
const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

describe("requests the fuzzing found answered 5xx", () => {
  let project: CreatedProject;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "fuzz-findings")).cookie, "Fuzz findings");
  });

  it("refuses a send body nested 100,000 deep (parsed off the event loop) with 422 naming the property, not 500", async () => {
    // Past 256 KB the body is parsed in a worker thread, whose result could not be cloned back.
    const answer = await call<ErrorBody>("POST", "/v1/send", {
      key: project.secretKey,
      rawBody: `{"to":"a@example.com","text":${nested(100_000)}}`,
    });
    expect(answer.status).toBe(422);
    expect(answer.body.error.errors).toEqual([expect.objectContaining({ field: "text", code: "too_big" })]);
  });

  it("refuses a small send body nested past 32 levels the same way, and takes one of 32", async () => {
    // 51 levels of data used to get past the gateway and fail in delivery, whose protobuf decoder stops at 100 messages.
    const deep = await call<ErrorBody>("POST", "/v1/send", {
      key: project.secretKey,
      rawBody: `{"to":"a@example.com","data":${nested(51)}}`,
    });
    expect(deep.status).toBe(422);
    expect(deep.body.error.errors).toEqual([expect.objectContaining({ field: "data", code: "too_big" })]);
    // With the body itself, 32 levels: one less gets past the check, to the next one (no sender given).
    const fits = await call<ErrorBody>("POST", "/v1/send", {
      key: project.secretKey,
      rawBody: `{"to":"a@example.com","data":${nested(31)}}`,
    });
    expect(fits.status).toBe(422);
    expect(fits.body.error.errors?.map((error) => error.field)).not.toContain("data");
  });

  it("refuses contact data nested 51 levels deep with 422, on every route, where it answered 500", async () => {
    const created = await call<{ id: string }>("POST", "/contacts", { key: project.secretKey, body: { email: "deep@example.com" } });
    expect(created.status).toBeLessThan(300);
    for (const [method, path] of [
      ["POST", "/contacts"],
      ["PATCH", `/contacts/${created.body.id}`],
    ]) {
      const answer = await call<ErrorBody>(method ?? "", path ?? "", {
        key: project.secretKey,
        rawBody: `{"email":"deep@example.com","data":${nested(51)}}`,
      });
      expect(answer.status, `${method} ${path}`).toBe(422);
      expect(answer.body.error.errors).toEqual([expect.objectContaining({ field: "data", code: "too_big" })]);
    }
  });
});
