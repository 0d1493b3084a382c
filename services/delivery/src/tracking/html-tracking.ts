import { decodeHTML, escapeAttribute } from "entities";
import type { LinkTokens } from "../links/link-tokens.js";

/** What to track in one email, decided from the project's tracking mode and the email's kind. */
export interface TrackingChoice {
  opens: boolean;
  clicks: boolean;
}

export const trackingModes = ["enabled", "disabled", "marketing"] as const;
export type TrackingMode = (typeof trackingModes)[number];

/** enabled: every email; disabled: none; marketing: campaign and workflow mail only, never transactional. */
export function trackingChoiceOf(mode: TrackingMode, marketing: boolean): TrackingChoice {
  const on = mode === "enabled" || (mode === "marketing" && marketing);
  return { opens: on, clicks: on };
}

// An anchor's href, double- or single-quoted, to an http(s) URL. Liquid already ran, so the HTML is final.
const anchorHref = /(<a\b[^>]*?\bhref\s*=\s*)(["'])(https?:\/\/[^"']+)\2/gi;

/**
 * The HTML as sent with tracking: each http(s) link goes through the gateway's click
 * redirect, and a 1×1 pixel before `</body>` (or at the end) reports the open. Links to
 * the gateway itself (the recipient's unsubscribe and manage pages) stay as they are, so
 * unsubscribing never depends on the redirect.
 */
export function withTracking(
  html: string,
  options: { choice: TrackingChoice; tokens: LinkTokens; publicUrl: string; projectId: string; emailId: string },
): string {
  const { choice, tokens, projectId, emailId } = options;
  const base = options.publicUrl.replace(/\/+$/, "");
  let tracked = html;
  if (choice.clicks) {
    tracked = tracked.replace(anchorHref, (whole, prefix: string, quote: string, encodedUrl: string) => {
      const url = decodeHTML(encodedUrl).trim();
      if (url.startsWith(`${base}/`) || !URL.canParse(url)) return whole;
      const redirect = `${base}/t/c/${tokens.sign({ kind: "click", projectId, emailId, url })}`;
      return `${prefix}${quote}${escapeAttribute(redirect)}${quote}`;
    });
  }
  if (choice.opens) {
    const pixel = `<img src="${base}/t/o/${tokens.sign({ kind: "open", projectId, emailId })}" width="1" height="1" alt="" style="display:none;border:0;width:1px;height:1px">`;
    const closing = tracked.search(/<\/body\s*>/i);
    tracked = closing < 0 ? `${tracked}${pixel}` : `${tracked.slice(0, closing)}${pixel}${tracked.slice(closing)}`;
  }
  return tracked;
}
