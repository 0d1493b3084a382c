import { describe, expect, it } from "vitest";
import { htmlOfText, systemEmailViolations } from "./system-email.js";

const valid = {
  idempotencyKey: "0b6f2a5e-1c1d-4f7e-9a3b-2f1e8d4c5b6a",
  kind: "verify_email",
  to: "Ann@Example.com",
  subject: "Verify your email address",
  text: "Open the link:\n\nhttps://herald.test/auth/verify-email?token=abc\n",
  expiresAt: undefined,
};

describe("account emails", () => {
  it("accepts a complete request", () => {
    expect(systemEmailViolations(valid)).toEqual([]);
  });

  it("names every missing or malformed field", () => {
    const violations = systemEmailViolations({
      ...valid,
      idempotencyKey: "",
      kind: "Verify!",
      to: "nobody",
      subject: "two\nlines",
      text: "",
    });
    expect(violations.map((violation) => violation.field)).toEqual(["idempotencyKey", "kind", "to", "subject", "text"]);
  });

  it("makes the text's URLs links, escapes the rest, and keeps sentence punctuation out of the link", () => {
    const html = htmlOfText("Hi <Ann> & co,\n\nOpen https://herald.test/a?b=1&c=2.\nThanks");
    expect(html).toContain("<p>Hi &#60;Ann&#62; &#38; co,</p>");
    expect(html).toContain('<a href="https://herald.test/a?b=1&#38;c=2">https://herald.test/a?b=1&#38;c=2</a>.<br>');
    expect(html).toContain("Thanks</p>");
  });
});
