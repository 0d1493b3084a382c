import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { domainErrorToConnect } from "./connect-error.js";
import { DomainError, notFound, validationFailed } from "./domain-error.js";
import { connectErrorToHttp, errorEnvelope } from "./http-envelope.js";

const throughTheWire = (error: DomainError) => connectErrorToHttp(domainErrorToConnect(error));

describe("domain error → ConnectError → HTTP envelope", () => {
  it.each([
    [new DomainError("invalid-argument", "BAD_REQUEST", "bad"), 400, "BAD_REQUEST"],
    [validationFailed("Validation failed", [{ field: "event", message: "reserved", code: "reserved_event" }]), 422, "VALIDATION_ERROR"],
    [new DomainError("unauthenticated", "INVALID_API_KEY", "A secret key is required"), 401, "INVALID_API_KEY"],
    [new DomainError("permission-denied", "PROJECT_DISABLED", "disabled"), 403, "PROJECT_DISABLED"],
    [notFound("Contact"), 404, "NOT_FOUND"],
    [new DomainError("conflict", "IDEMPOTENCY_KEY_REUSED", "reused"), 409, "IDEMPOTENCY_KEY_REUSED"],
    [new DomainError("rate-limited", "RATE_LIMIT_EXCEEDED", "slow down"), 429, "RATE_LIMIT_EXCEEDED"],
    [new DomainError("unavailable", "SERVICE_UNAVAILABLE", "try later"), 503, "SERVICE_UNAVAILABLE"],
  ])("%s answers %i with its code", (error, status, code) => {
    expect(throughTheWire(error)).toMatchObject({ statusCode: status, code, message: error.message });
  });

  it("keeps field errors, details and the suggestion", () => {
    const error = new DomainError("conflict", "IDEMPOTENCY_KEY_REUSED", "Idempotency key reused", {
      details: { key: "k1", originalStatusCode: "200" },
      suggestion: "Use a new key for a new request",
    });
    expect(throughTheWire(error)).toEqual({
      statusCode: 409,
      code: "IDEMPOTENCY_KEY_REUSED",
      message: "Idempotency key reused",
      details: { key: "k1", originalStatusCode: "200" },
      suggestion: "Use a new key for a new request",
    });
    const violations = throughTheWire(
      validationFailed("bad", [{ field: "data.age", message: "must be a number", code: "invalid_type", received: '"x"' }]),
    );
    expect(violations.errors).toEqual([{ field: "data.age", message: "must be a number", code: "invalid_type", received: '"x"' }]);
  });

  it("never shows the text of an internal error to the client", () => {
    expect(connectErrorToHttp(new ConnectError("password=hunter2 leaked", Code.Internal))).toEqual({
      statusCode: 500,
      code: "INTERNAL_SERVER_ERROR",
      message: "An unexpected error occurred",
    });
    expect(connectErrorToHttp(new TypeError("x is undefined")).statusCode).toBe(500);
  });

  it("builds the envelope of SPEC.md", () => {
    const now = new Date("2026-01-02T03:04:05.000Z");
    expect(errorEnvelope({ statusCode: 404, code: "NOT_FOUND", message: "Contact not found" }, "req-1", now)).toEqual({
      success: false,
      error: { code: "NOT_FOUND", message: "Contact not found", statusCode: 404, requestId: "req-1" },
      timestamp: "2026-01-02T03:04:05.000Z",
    });
  });
});
