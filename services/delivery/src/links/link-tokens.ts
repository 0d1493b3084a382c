import { createHmac, createSecretKey, timingSafeEqual } from "node:crypto";

/**
 * The tokens in the links of an email: the recipient's unsubscribe, subscribe and manage
 * pages, the open pixel and the click redirects. Each is self-contained (nothing is stored
 * per link) and signed, so that nobody can unsubscribe another contact, forge an open, or
 * turn the redirect into an open redirect. They do not expire: an unsubscribe link must
 * work in an email read years later (RFC 8058 asks the same of List-Unsubscribe).
 *
 * Layout, base64url: kind (1 byte) · project id (16) · subject id (16) · [click: the URL,
 * UTF-8; a recipient's link from an email: that email's id (16)] · HMAC-SHA256 of all
 * that, truncated to 16 bytes. A recipient's link names the email it came in (its own
 * kind byte), so that an unsubscribe is counted for that email's campaign; links signed
 * before they did (no email id) are read as ever.
 */
export type LinkToken =
  | { kind: "recipient"; projectId: string; contactId: string; emailId?: string }
  | { kind: "open"; projectId: string; emailId: string }
  | { kind: "click"; projectId: string; emailId: string; url: string };

const kindBytes = { recipient: 0x52, open: 0x4f, click: 0x43 } as const;
/** A recipient's link that names its email. */
const recipientOfEmailByte = 0x72;
const macBytes = 16;
const idBytes = 16;
const headerBytes = 1 + 2 * idBytes;

const uuidBytes = (id: string): Buffer => Buffer.from(id.replaceAll("-", ""), "hex");

const uuidOf = (bytes: Buffer): string => {
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

export interface LinkTokens {
  sign(token: LinkToken): string;
  /** The token's contents, or undefined when it is malformed or its signature does not match. */
  read(text: string): LinkToken | undefined;
}

export function createLinkTokens(secret: string): LinkTokens {
  // A KeyObject made once (the secret's UTF-8 bytes, as createHmac reads a string key), not on every token.
  const key = createSecretKey(secret, "utf8");
  const macOf = (payload: Buffer): Buffer => createHmac("sha256", key).update(payload).digest().subarray(0, macBytes);
  return {
    sign(token) {
      const subject = token.kind === "recipient" ? token.contactId : token.emailId;
      const ofEmail = token.kind === "recipient" ? token.emailId : undefined;
      const kind = ofEmail === undefined ? kindBytes[token.kind] : recipientOfEmailByte;
      const parts = [Buffer.of(kind), uuidBytes(token.projectId), uuidBytes(subject)];
      if (token.kind === "click") parts.push(Buffer.from(token.url, "utf8"));
      if (ofEmail !== undefined) parts.push(uuidBytes(ofEmail));
      const payload = Buffer.concat(parts);
      return Buffer.concat([payload, macOf(payload)]).toString("base64url");
    },

    read(text) {
      if (!/^[A-Za-z0-9_-]+$/.test(text) || text.length > 16_384) return undefined;
      const bytes = Buffer.from(text, "base64url");
      if (bytes.length < headerBytes + macBytes) return undefined;
      const payload = bytes.subarray(0, bytes.length - macBytes);
      if (!timingSafeEqual(bytes.subarray(bytes.length - macBytes), macOf(payload))) return undefined;
      const projectId = uuidOf(payload.subarray(1, 1 + idBytes));
      const subject = uuidOf(payload.subarray(1 + idBytes, headerBytes));
      const rest = payload.subarray(headerBytes);
      switch (payload[0]) {
        case kindBytes.recipient:
          return rest.length === 0 ? { kind: "recipient", projectId, contactId: subject } : undefined;
        case recipientOfEmailByte:
          return rest.length === idBytes ? { kind: "recipient", projectId, contactId: subject, emailId: uuidOf(rest) } : undefined;
        case kindBytes.open:
          return rest.length === 0 ? { kind: "open", projectId, emailId: subject } : undefined;
        case kindBytes.click:
          return rest.length > 0 ? { kind: "click", projectId, emailId: subject, url: rest.toString("utf8") } : undefined;
        default:
          return undefined;
      }
    },
  };
}

export type RecipientLinks = ReturnType<typeof recipientLinks>;

/** The text with the recipient's links where a caller rendered markers for them (an empty marker is not looked for). */
export function withRecipientLinks(text: string, markers: Record<keyof RecipientLinks, string>, links: RecipientLinks): string {
  let out = text;
  for (const name of ["unsubscribeUrl", "subscribeUrl", "manageUrl"] as const) {
    if (markers[name] !== "") out = out.replaceAll(markers[name], links[name]);
  }
  return out;
}

/**
 * The recipient's links at the gateway's public URL (the Liquid variables unsubscribeUrl, subscribeUrl, manageUrl),
 * naming the email they go in when it is given.
 */
export function recipientLinks(tokens: LinkTokens, publicUrl: string, projectId: string, contactId: string, emailId?: string) {
  const token = tokens.sign({ kind: "recipient", projectId, contactId, ...(emailId === undefined ? {} : { emailId }) });
  const base = publicUrl.replace(/\/+$/, "");
  return {
    unsubscribeUrl: `${base}/unsubscribe/${token}`,
    subscribeUrl: `${base}/subscribe/${token}`,
    manageUrl: `${base}/manage/${token}`,
  };
}
