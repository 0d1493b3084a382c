import { DomainError } from "@herald/errors";
import { describe, expect, it } from "vitest";
import { checkEndpointFields, newMessageId, newSecret, secretPrefixOf } from "./endpoint-input.js";

const violationsOf = (fields: Parameters<typeof checkEndpointFields>[0], allowHttp = false) => {
  try {
    checkEndpointFields(fields, allowHttp);
    return [];
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return error.fieldViolations.map((violation) => `${violation.field}:${violation.code}`);
  }
};

describe("checkEndpointFields", () => {
  it("accepts https URLs, known types and short descriptions", () => {
    expect(
      violationsOf({ url: "https://example.com/hooks?x=1", description: "CRM", eventTypes: ["email.bounced", "segment.entered"] }),
    ).toEqual([]);
  });

  it("allows http only where the deployment does", () => {
    expect(violationsOf({ url: "http://example.com/" })).toEqual(["url:invalid_scheme"]);
    expect(violationsOf({ url: "http://example.com/" }, true)).toEqual([]);
    expect(violationsOf({ url: "file:///etc/passwd" }, true)).toEqual(["url:invalid_scheme"]);
  });

  it("names every bad field at once", () => {
    expect(
      violationsOf({
        url: "https://a:b@example.com/",
        description: "x".repeat(501),
        eventTypes: ["email.sent", "email.lost", "Email.Sent"],
      }),
    ).toEqual(["url:credentials_in_url", "description:too_long", "eventTypes[1]:unknown_event_type", "eventTypes[2]:unknown_event_type"]);
    expect(violationsOf({ url: `https://example.com/${"a".repeat(2_048)}` })).toEqual(["url:too_long"]);
    expect(violationsOf({ url: "example.com/hook" })).toEqual(["url:invalid_url"]);
  });
});

describe("secrets and ids", () => {
  it("makes Standard Webhooks secrets and shows their first 10 characters", () => {
    const secret = newSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(secretPrefixOf(secret)).toBe(secret.slice(0, 10));
    expect(newSecret()).not.toBe(secret);
  });

  it("makes msg_ ids", () => {
    expect(newMessageId()).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
  });
});
