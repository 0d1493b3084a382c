import { describe, expect, it } from "vitest";
import { type SendRequest, sendRequestViolations, splitMailbox } from "./send-request.js";

const request = (overrides: Partial<SendRequest> = {}): SendRequest => ({
  to: [{ email: "ann@example.com" }],
  subject: "Hi",
  body: "<p>Hi</p>",
  from: { email: "news@example.com" },
  headers: {},
  attachments: [],
  ...overrides,
});

describe("a send request's checks", () => {
  it("accepts a complete request, and one that leaves subject, body and from to a template", () => {
    expect(sendRequestViolations(request())).toEqual([]);
    const templated = request({ templateId: "0b6e2b3c-8a4f-4c8e-9f1a-2d3c4b5a6e7f" });
    delete templated.subject;
    delete templated.body;
    delete templated.from;
    expect(sendRequestViolations(templated)).toEqual([]);
  });

  it("names `to` for one recipient and `to[i]` in a list", () => {
    expect(sendRequestViolations(request({ to: [{ email: "nope" }] })).map((v) => v.field)).toEqual(["to"]);
    expect(sendRequestViolations(request({ to: [{ email: "a@example.com" }, { email: "nope" }] })).map((v) => v.field)).toEqual(["to[1]"]);
    expect(sendRequestViolations(request({ to: Array.from({ length: 51 }, (_, i) => ({ email: `r${i}@example.com` })) }))[0]?.code).toBe(
      "too_big",
    );
  });

  it("keeps subjects on one line of at most 998 characters", () => {
    expect(sendRequestViolations(request({ subject: "s".repeat(998) }))).toEqual([]);
    for (const subject of ["", "s".repeat(999), "a\nb", "a\rb"]) {
      expect(sendRequestViolations(request({ subject })).map((v) => v.field)).toEqual(["subject"]);
    }
  });

  it("checks headers and attachments with the queue's rules", () => {
    expect(sendRequestViolations(request({ headers: { "X-A": "a\r\nb" } })).map((v) => v.field)).toEqual(["headers.X-A"]);
    expect(sendRequestViolations(request({ headers: { Subject: "x" } }))[0]?.code).toBe("reserved_header");
    const tooMany = Array.from({ length: 11 }, () => ({ filename: "a.txt", content: new Uint8Array(1), contentType: "text/plain" }));
    expect(sendRequestViolations(request({ attachments: tooMany })).map((v) => v.field)).toEqual(["attachments"]);
  });
});

describe("splitMailbox", () => {
  it.each([
    ["news@example.com", { email: "news@example.com" }],
    ["News <news@example.com>", { email: "news@example.com", name: "News" }],
    ['"Acme, Inc." <news@example.com>', { email: "news@example.com", name: "Acme, Inc." }],
    ["<news@example.com>", { email: "news@example.com" }],
  ])("reads %s", (text, mailbox) => {
    expect(splitMailbox(text)).toEqual(mailbox);
  });
});
