import { createHmac, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createLinkTokens, type LinkToken, recipientLinks, withRecipientLinks } from "./link-tokens.js";

const tokens = createLinkTokens("a link signing secret of at least 32 characters");

describe("link tokens", () => {
  const samples: LinkToken[] = [
    { kind: "recipient", projectId: randomUUID(), contactId: randomUUID() },
    { kind: "recipient", projectId: randomUUID(), contactId: randomUUID(), emailId: randomUUID() },
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

  it("still reads a recipient's link signed before links named their email", () => {
    // Signed with this secret by the layout of every link sent until then: kind 0x52, project, contact, MAC.
    const old = "UhEREREiIkMzhERVVVVVVVVmZmZmd3dIiJmZqqqqqqqqgdi3e7TMjcfVmPhS9N8ZYQ";
    expect(tokens.read(old)).toEqual({
      kind: "recipient",
      projectId: "11111111-2222-4333-8444-555555555555",
      contactId: "66666666-7777-4888-9999-aaaaaaaaaaaa",
    });
    expect(
      tokens.sign({
        kind: "recipient",
        projectId: "11111111-2222-4333-8444-555555555555",
        contactId: "66666666-7777-4888-9999-aaaaaaaaaaaa",
      }),
    ).toBe(old);
  });

  it("refuses a recipient's link whose email id is cut short or lengthened, even correctly signed", () => {
    const secret = "a link signing secret of at least 32 characters";
    const signed = (payload: Buffer) =>
      Buffer.concat([payload, createHmac("sha256", secret).update(payload).digest().subarray(0, 16)]).toString("base64url");
    const header = Buffer.concat([Buffer.of(0x72), Buffer.alloc(32, 0x11)]);
    expect(tokens.read(signed(Buffer.concat([header, Buffer.alloc(16, 0x22)])))).toMatchObject({ kind: "recipient" });
    expect(tokens.read(signed(Buffer.concat([header, Buffer.alloc(15, 0x22)])))).toBeUndefined();
    expect(tokens.read(signed(Buffer.concat([header, Buffer.alloc(17, 0x22)])))).toBeUndefined();
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
    const emailId = randomUUID();
    const ofEmail =
      recipientLinks(tokens, "https://mail.example.com/", projectId, contactId, emailId).unsubscribeUrl.split("/").at(-1) ?? "";
    expect(tokens.read(ofEmail)).toEqual({ kind: "recipient", projectId, contactId, emailId });
  });

  it("writes the recipient's links where a caller rendered markers, every occurrence; an empty marker is not looked for", () => {
    const links = recipientLinks(tokens, "https://mail.example.com", randomUUID(), randomUUID());
    const markers = { unsubscribeUrl: "%%u%%", subscribeUrl: "%%s%%", manageUrl: "" };
    expect(withRecipientLinks('<a href="%%u%%">%%u%%</a> %%s%% [%%m%%]', markers, links)).toBe(
      `<a href="${links.unsubscribeUrl}">${links.unsubscribeUrl}</a> ${links.subscribeUrl} [%%m%%]`,
    );
  });
});
