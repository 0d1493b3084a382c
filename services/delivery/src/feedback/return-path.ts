import { createHmac, createSecretKey, timingSafeEqual } from "node:crypto";

/**
 * VERP return paths (the envelope sender, where receivers send bounces): one address per email,
 * `bounce+<email id, 32 hex>-<tag>@<BOUNCE_DOMAIN>`, so that a delivery status notification
 * names its email whatever it quotes of the original. The tag is an HMAC of the id: without it,
 * anyone who learnt an email id could bounce it, and suppress its recipient, with one message.
 * Lower case throughout, as some receivers lower-case what they reply to.
 */
export interface ReturnPaths {
  /** The bounce domain (BOUNCE_DOMAIN). */
  domain: string;
  addressOf(emailId: string): string;
  /** The email id a return path names, or undefined when it is not one of ours (or its tag is wrong). */
  emailIdOf(address: string): string | undefined;
  /**
   * `fbl@<BOUNCE_DOMAIN>`: the address to register with mailbox providers' feedback loops, which
   * send their complaint reports to one fixed address rather than to the return path.
   */
  feedbackAddress: string;
}

const tagLength = 16;
const pattern = /^bounce\+([0-9a-f]{32})-([0-9a-f]+)@(.+)$/;

export function createReturnPaths(options: { domain: string; secret: string }): ReturnPaths {
  const domain = options.domain.toLowerCase();
  // A key of its own, derived from the link signing secret: a link token can never pass for a return path.
  // Made a KeyObject once, not on every address.
  const key = createSecretKey(createHmac("sha256", options.secret).update("herald return path v1").digest());
  const tagOf = (hex: string) => createHmac("sha256", key).update(hex).digest("hex").slice(0, tagLength);
  return {
    domain,
    feedbackAddress: `fbl@${domain}`,
    addressOf(emailId) {
      const hex = emailId.replaceAll("-", "").toLowerCase();
      return `bounce+${hex}-${tagOf(hex)}@${domain}`;
    },
    emailIdOf(address) {
      const match = pattern.exec(address.trim().toLowerCase());
      if (!match) return undefined;
      const [, hex = "", tag = "", at = ""] = match;
      if (at !== domain || tag.length !== tagLength) return undefined;
      if (!timingSafeEqual(Buffer.from(tag), Buffer.from(tagOf(hex)))) return undefined;
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    },
  };
}
