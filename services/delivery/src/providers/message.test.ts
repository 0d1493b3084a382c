import { describe, expect, it } from "vitest";
import { InvalidMessageError, type OutgoingEmail, toNodemailerMessage } from "./message.js";
import { plainTextOf } from "./signed-message.js";

const email: OutgoingEmail = {
  emailId: "0b7e0f5e-8d0c-4a53-9a57-3f1d2c7c6a10",
  from: { email: "hello@mail.example.com", name: "Example" },
  to: { email: "ada@example.org", name: "Ada" },
  subject: "Your order",
  html: "<p>Hi</p>",
  messageIdDomain: "mail.example.com",
};

function refusal(change: Partial<OutgoingEmail>): InvalidMessageError {
  try {
    toNodemailerMessage({ ...email, ...change });
  } catch (error) {
    if (error instanceof InvalidMessageError) return error;
    throw error;
  }
  throw new Error("the message was accepted");
}

describe("outgoing message", () => {
  it("gets a fresh Message-ID on the sending domain", () => {
    const first = toNodemailerMessage(email).messageId;
    expect(first).toMatch(/^<[0-9a-f-]{36}@mail\.example\.com>$/);
    expect(toNodemailerMessage(email).messageId).not.toBe(first);
  });

  it("carries our email id and, for marketing mail, the one-click unsubscribe pair", () => {
    const message = toNodemailerMessage({
      ...email,
      listUnsubscribe: { url: "https://herald.example/unsubscribe/t0k3n", mailto: "unsubscribe@mail.example.com" },
    });
    expect(message.headers).toEqual({
      "X-Herald-Email-ID": email.emailId,
      "List-Unsubscribe": "<https://herald.example/unsubscribe/t0k3n>, <mailto:unsubscribe@mail.example.com>",
      "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
    });
    expect(toNodemailerMessage(email).headers).toEqual({ "X-Herald-Email-ID": email.emailId });
  });

  it("has a plain-text part made from the HTML: links kept, images (the open pixel) left out", () => {
    const text = plainTextOf(
      '<h1>Order shipped</h1><p>Track it <a href="https://shop.example/track/1">here</a>.</p><img src="https://herald.example/o/px.gif" alt="">',
    );
    expect(text).toContain("ORDER SHIPPED");
    expect(text).toContain("Track it here [https://shop.example/track/1].");
    expect(text).not.toContain("px.gif");
    expect(plainTextOf("<p>Hello <b>Ada</b></p>")).toBe("Hello Ada");
  });

  it.each([
    [{ headers: { "X-Campaign": "spring\r\nBcc: everyone@example.org" } }, "line-break", "headers.X-Campaign"],
    [{ headers: { "X-Campaign": "spring\nsale" } }, "line-break", "headers.X-Campaign"],
    [{ headers: { "X-Bad\r\nBcc": "x" } }, "header-name", "headers.X-Bad\r\nBcc"],
    [{ headers: { "X Bad": "x" } }, "header-name", "headers.X Bad"],
    [{ headers: { "X:Bad": "x" } }, "header-name", "headers.X:Bad"],
    [{ headers: { from: "ceo@bank.example" } }, "reserved-header", "headers.from"],
    [{ headers: { "Content-Type": "text/plain" } }, "reserved-header", "headers.Content-Type"],
    [{ headers: { "x-herald-email-id": "someone-else" } }, "reserved-header", "headers.x-herald-email-id"],
    [{ subject: "Hi\r\nBcc: everyone@example.org" }, "line-break", "subject"],
    [{ from: { email: "hello@mail.example.com", name: "Ex\rample" } }, "line-break", "from.name"],
    [{ replyTo: { email: "a@b.example\n" } }, "line-break", "replyTo.email"],
    [{ listUnsubscribe: { url: "https://herald.example/u/1>, <https://evil.example" } }, "list-unsubscribe-uri", "listUnsubscribe"],
  ] as const)("refuses %j as %s", (change, reason, field) => {
    const error = refusal(change as Partial<OutgoingEmail>);
    expect(error.reason).toBe(reason);
    expect(error.field).toBe(field);
  });
});
