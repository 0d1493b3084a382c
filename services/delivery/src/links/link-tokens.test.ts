import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createLinkTokens, type LinkToken, recipientLinks, withRecipientLinks } from "./link-tokens.js";

const tokens = createLinkTokens("a link signing secret of at least 32 characters");

describe("link tokens", () => {
  const samples: LinkToken[] = [
    { kind: "recipient", projectId: randomUUID(), contactId: randomUUID() },
    { kind: "open", projectId: randomUUID(), emailId: randomUUID() },
    { kind: "click", projectId: randomUUID(), emailId: randomUUID(), url: "https://example.com/päth?q=1&r=ü#top" },
  ];

  it.each(samples)("reads back what it signed ($kind), as URL-safe text", (token) => {
    const text = tokens.sign(token);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(tokens.read(text)).toEqual(token);
  });

  it("refuses a token with any byte changed, another secret's token, and junk", () => {
    const text = tokens.sign({ kind: "click", projectId: randomUUID(), emailId: randomUUID(), url: "https://example.com/a" });
    const bytes = Buffer.from(text, "base64url");
    for (let index = 0; index < bytes.length; index++) {
      const tampered = Buffer.from(bytes);
      tampered[index] = (tampered[index] ?? 0) ^ 0x01;
      expect(tokens.read(tampered.toString("base64url"))).toBeUndefined();
    }
    expect(createLinkTokens("another secret, also 32 characters long").read(text)).toBeUndefined();
    for (const junk of ["", "abc", "!!!!", "a".repeat(20_000), text.slice(0, 40)]) expect(tokens.read(junk)).toBeUndefined();
  });

  it("builds the recipient's three pages at the public URL", () => {
    const projectId = randomUUID();
    const contactId = randomUUID();
    const links = recipientLinks(tokens, "https://mail.example.com/", projectId, contactId);
    const token = links.unsubscribeUrl.split("/").at(-1) ?? "";
    expect(links).toEqual({
      unsubscribeUrl: `https://mail.example.com/unsubscribe/${token}`,
      subscribeUrl: `https://mail.example.com/subscribe/${token}`,
      manageUrl: `https://mail.example.com/manage/${token}`,
    });
    expect(tokens.read(token)).toEqual({ kind: "recipient", projectId, contactId });
  });

  it("writes the recipient's links where a caller rendered markers, every occurrence; an empty marker is not looked for", () => {
    const links = recipientLinks(tokens, "https://mail.example.com", randomUUID(), randomUUID());
    const markers = { unsubscribeUrl: "%%u%%", subscribeUrl: "%%s%%", manageUrl: "" };
    expect(withRecipientLinks('<a href="%%u%%">%%u%%</a> %%s%% [%%m%%]', markers, links)).toBe(
      `<a href="${links.unsubscribeUrl}">${links.unsubscribeUrl}</a> ${links.subscribeUrl} [%%m%%]`,
    );
  });
});
