import { describe, expect, it } from "vitest";
import { emailInputViolations } from "./email-input.js";
import { estimatedMessageBytes, type SendRequest, sendLimits, sendRequestViolations, splitMailbox } from "./send-request.js";

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
    for (const subject of ["", "s".repeat(999), "a\nb", "a\rb", "a\0b"]) {
      expect(sendRequestViolations(request({ subject })).map((v) => v.field)).toEqual(["subject"]);
    }
  });

  it("checks headers and attachments with the queue's rules", () => {
    expect(sendRequestViolations(request({ headers: { "X-A": "a\r\nb" } })).map((v) => v.field)).toEqual(["headers.X-A"]);
    expect(sendRequestViolations(request({ headers: { Subject: "x" } }))[0]?.code).toBe("reserved_header");
    for (const name of ["Resent-From", "resent-message-id", "Authentication-Results", "ARC-Seal", "arc-authentication-results"]) {
      expect(sendRequestViolations(request({ headers: { [name]: "x" } }))).toEqual([
        expect.objectContaining({ field: `headers.${name}`, code: "reserved_header" }),
      ]);
    }
    expect(sendRequestViolations(request({ headers: { "X-Resent-Note": "x", Arcade: "x" } }))).toEqual([]);
    const tooMany = Array.from({ length: 11 }, () => ({ filename: "a.txt", content: new Uint8Array(1), contentType: "text/plain" }));
    expect(sendRequestViolations(request({ attachments: tooMany })).map((v) => v.field)).toEqual(["attachments"]);
  });

  it("takes attachments up to the configured size together, SPEC.md's 10 MB when none is given", () => {
    const attachments = (bytes: number) => [{ filename: "a.bin", content: new Uint8Array(bytes), contentType: "application/pdf" }];
    const megabyte = 1024 * 1024;
    expect(sendRequestViolations(request({ attachments: attachments(10 * megabyte) }))).toEqual([]);
    expect(sendRequestViolations(request({ attachments: attachments(10 * megabyte + 1) }))[0]?.message).toBe(
      "must be at most 10 MB together",
    );
    expect(sendRequestViolations(request({ attachments: attachments(20 * megabyte) }), 20 * megabyte)).toEqual([]);
    expect(sendRequestViolations(request({ attachments: attachments(512 * 1024 + 1) }), 512 * 1024)[0]?.message).toBe(
      "must be at most 512 KB together",
    );
    // The queue's own check takes the same setting.
    const queued = {
      to: { email: "a@example.com" },
      from: { email: "b@example.com" },
      subject: "s",
      html: "h",
      attachments: attachments(1),
    };
    expect(emailInputViolations(queued, 0).map((v) => v.field)).toEqual(["attachments"]);
  });

  it("allows at most 100 custom headers", () => {
    const headers = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`X-H${i}`, "v"]));
    expect(sendRequestViolations(request({ headers: headers(100) }))).toEqual([]);
    expect(sendRequestViolations(request({ headers: headers(101) }))).toEqual([
      { field: "headers", message: "must be at most 100 headers", code: "too_big" },
    ]);
  });

  it("refuses every display name the queue would refuse, before anything is written", () => {
    const long = "n".repeat(321);
    const fields = (overrides: Partial<SendRequest>) => sendRequestViolations(request(overrides)).map((v) => v.field);
    expect(fields({ to: [{ email: "ann@example.com", name: "n".repeat(320) }] })).toEqual([]);
    expect(fields({ to: [{ email: "ann@example.com", name: long }] })).toEqual(["to.name"]);
    expect(fields({ to: [{ email: "a@example.com" }, { email: "b@example.com", name: "a\0b" }] })).toEqual(["to[1].name"]);
    expect(fields({ from: { email: "news@example.com", name: long } })).toEqual(["from.name"]);
    expect(fields({ from: { email: `${long} <news@example.com>` } })).toEqual(["from.name"]);
    expect(fields({ senderName: long })).toEqual(["name"]);
    // The queue's own check agrees on the same name.
    const queued = { to: { email: "ann@example.com", name: long }, from: { email: "news@example.com" }, subject: "s", html: "h" };
    expect(emailInputViolations(queued).map((v) => v.field)).toEqual(["to.name"]);
  });

  it("counts attachments once per recipient: at most 40 MB stored by one call", () => {
    const attachment = (megabytes: number) => [
      { filename: "a.bin", content: new Uint8Array(megabytes * 1024 * 1024), contentType: "application/pdf" },
    ];
    const recipients = (count: number) => Array.from({ length: count }, (_, i) => ({ email: `r${i}@example.com` }));
    expect(sendRequestViolations(request({ to: recipients(4), attachments: attachment(10) }))).toEqual([]);
    expect(sendRequestViolations(request({ to: recipients(5), attachments: attachment(9) }))).toEqual([
      expect.objectContaining({ field: "attachments", code: "too_big" }),
    ]);
  });
});

describe("estimatedMessageBytes", () => {
  it("counts the custom headers as written", () => {
    const without = estimatedMessageBytes("<p>x</p>", "s", {}, []);
    expect(estimatedMessageBytes("<p>x</p>", "s", { "X-A": "a".repeat(998) }, [])).toBe(without + "X-A: ".length + 998 + 2);
    expect(sendLimits.messageBytes).toBe(40 * 1024 * 1024);
  });
});

describe("splitMailbox", () => {
  it.each([
    ["news@example.com", { email: "news@example.com" }],
    ["News <news@example.com>", { email: "news@example.com", name: "News" }],
    ['"Acme, Inc." <news@example.com>', { email: "news@example.com", name: "Acme, Inc." }],
    ["<news@example.com>", { email: "news@example.com" }],
    [`"  News  " <news@example.com>`, { email: "news@example.com", name: "News" }],
    ['"a" "b" <news@example.com>', { email: '"a" "b" <news@example.com>' }],
    ["News <>", { email: "News <>" }],
  ])("reads %s", (text, mailbox) => {
    expect(splitMailbox(text)).toEqual(mailbox);
  });

  it("reads the issue 20 payloads, long runs of spaces, as text that is no mailbox", () => {
    const spaces = " ".repeat(sendLimits.mailbox - 2);
    expect(splitMailbox(`"${spaces}<`)).toEqual({ email: `"${spaces}<` });
    expect(splitMailbox(`a${spaces}!`)).toEqual({ email: `a${spaces}!` });
  });

  it("is refused past sendLimits.mailbox characters, before it is read", () => {
    const long = request({ from: { email: `${" ".repeat(sendLimits.mailbox)}<a@example.com>` } });
    expect(sendRequestViolations(long)).toEqual([expect.objectContaining({ field: "from", code: "too_big" })]);
  });
});
