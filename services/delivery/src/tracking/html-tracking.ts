import { decodeHTML, escapeAttribute } from "entities";
import { QuoteType, Tokenizer } from "htmlparser2";
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

/** Where an attribute value sits in the HTML, without its quotes. */
interface AttributeSpan {
  start: number;
  end: number;
}

/**
 * The quoted `href` values of the `<a>` tags of the HTML, in order, found by htmlparser2's tokenizer in one pass:
 * the pattern this replaces was quadratic on repeated `<a ` (issue 20). Comments, scripts and styles are skipped.
 */
export function anchorHrefs(html: string): AttributeSpan[] {
  const spans: AttributeSpan[] = [];
  let inAnchor = false;
  let isHref = false;
  let value: AttributeSpan | undefined;
  const ignore = () => {};
  const tokenizer = new Tokenizer(
    { decodeEntities: false },
    {
      onopentagname(start, end) {
        inAnchor = end - start === 1 && (html[start] === "a" || html[start] === "A");
      },
      onattribname(start, end) {
        isHref = inAnchor && html.slice(start, end).toLowerCase() === "href";
        value = undefined;
      },
      onattribdata(start, end) {
        if (isHref) value = value ? { start: value.start, end } : { start, end };
      },
      onattribend(quote) {
        if (isHref && value && (quote === QuoteType.Double || quote === QuoteType.Single)) spans.push(value);
        isHref = false;
        value = undefined;
      },
      onopentagend() {
        inAnchor = false;
      },
      onselfclosingtag() {
        inAnchor = false;
      },
      onattribentity: ignore,
      oncdata: ignore,
      onclosetag: ignore,
      oncomment: ignore,
      ondeclaration: ignore,
      onend: ignore,
      onprocessinginstruction: ignore,
      ontext: ignore,
      ontextentity: ignore,
    },
  );
  tokenizer.write(html);
  tokenizer.end();
  return spans;
}

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
    // Liquid already ran, so the HTML is final: each quoted http(s) href of an anchor is replaced in place.
    const parts: string[] = [];
    let copied = 0;
    for (const { start, end } of anchorHrefs(tracked)) {
      const url = decodeHTML(tracked.slice(start, end)).trim();
      if (!/^https?:\/\//i.test(url) || url.startsWith(`${base}/`) || !URL.canParse(url)) continue;
      const redirect = `${base}/t/c/${tokens.sign({ kind: "click", projectId, emailId, url })}`;
      parts.push(tracked.slice(copied, start), escapeAttribute(redirect));
      copied = end;
    }
    tracked = parts.length === 0 ? tracked : parts.join("") + tracked.slice(copied);
  }
  if (choice.opens) {
    const pixel = `<img src="${base}/t/o/${tokens.sign({ kind: "open", projectId, emailId })}" width="1" height="1" alt="" style="display:none;border:0;width:1px;height:1px">`;
    const closing = tracked.search(/<\/body\s*>/i);
    tracked = closing < 0 ? `${tracked}${pixel}` : `${tracked.slice(0, closing)}${pixel}${tracked.slice(closing)}`;
  }
  return tracked;
}
