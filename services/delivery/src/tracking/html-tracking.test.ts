import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createLinkTokens } from "../links/link-tokens.js";
import { trackingChoiceOf, withTracking } from "./html-tracking.js";

const tokens = createLinkTokens("html tracking test secret, 32+ characters");
const projectId = randomUUID();
const emailId = randomUUID();
const publicUrl = "https://mail.example.com";
const on = { opens: true, clicks: true };

const tokenOf = (url: string) => url.split("/").at(-1) ?? "";

describe("withTracking", () => {
  it("routes each http(s) link through a signed click redirect, keeping the exact URL", () => {
    const html = `<p><a href="https://example.com/a?x=1&amp;y=2">A</a> <a class='b' href='http://example.org/b'>B</a></p>`;
    const tracked = withTracking(html, { choice: { opens: false, clicks: true }, tokens, publicUrl, projectId, emailId });
    const hrefs = [...tracked.matchAll(/href=["']([^"']+)["']/g)].map((match) => match[1] ?? "");
    expect(hrefs).toHaveLength(2);
    expect(hrefs.every((href) => href.startsWith(`${publicUrl}/t/c/`))).toBe(true);
    expect(hrefs.map((href) => tokens.read(tokenOf(href)))).toEqual([
      { kind: "click", projectId, emailId, url: "https://example.com/a?x=1&y=2" },
      { kind: "click", projectId, emailId, url: "http://example.org/b" },
    ]);
    expect(tracked).toContain("class='b'");
  });

  it("leaves mailto, anchors, relative links and the gateway's own pages alone", () => {
    const html = `<a href="mailto:a@example.com">m</a><a href="#top">t</a><a href="/x">r</a><a href="${publicUrl}/unsubscribe/abc">u</a>`;
    expect(withTracking(html, { choice: { opens: false, clicks: true }, tokens, publicUrl, projectId, emailId })).toBe(html);
  });

  it("adds the open pixel before </body>, or at the end without one", () => {
    const withBody = withTracking("<html><body><p>Hi</p></BODY></html>", { choice: on, tokens, publicUrl, projectId, emailId });
    expect(withBody).toMatch(/<p>Hi<\/p><img src="https:\/\/mail\.example\.com\/t\/o\/[A-Za-z0-9_-]+"[^>]*><\/BODY><\/html>$/);
    const src = /src="([^"]+)"/.exec(withBody)?.[1] ?? "";
    expect(tokens.read(tokenOf(src))).toEqual({ kind: "open", projectId, emailId });
    expect(withTracking("<p>Hi</p>", { choice: on, tokens, publicUrl, projectId, emailId })).toMatch(/^<p>Hi<\/p><img /);
  });

  it("reads only the quoted hrefs of anchors: not other tags, attributes, comments or scripts", () => {
    const html = `<A HREF="https://example.com/a">A</A><link href="https://example.com/l"><a data-href="https://example.com/d" href=https://example.com/u>u</a><!-- <a href="https://example.com/c"> --><script>"<a href='https://example.com/s'>"</script>`;
    const tracked = withTracking(html, { choice: { opens: false, clicks: true }, tokens, publicUrl, projectId, emailId });
    expect(tracked.match(/\/t\/c\//g)).toHaveLength(1);
    expect(tracked.startsWith(`<A HREF="${publicUrl}/t/c/`)).toBe(true);
    expect(tracked.slice(tracked.indexOf("</A>"))).toBe(html.slice(html.indexOf("</A>")));
  });

  it("rewrites the issue 20 payload, 500,000 characters of repeated `<a ` around two links, keeping the rest", () => {
    const link = `<a href="https://example.com/x">x</a>`;
    const html = `${link}${"<a ".repeat(166_000)}${link}`;
    const tracked = withTracking(html, { choice: { opens: false, clicks: true }, tokens, publicUrl, projectId, emailId });
    // The second href belongs to the first unclosed `<a` of the run, as in a browser: both are tracked.
    expect(tracked.match(/\/t\/c\//g)).toHaveLength(2);
    expect(tracked).toContain(`</a>${"<a ".repeat(166_000)}<a href="${publicUrl}/t/c/`);
  });

  it("changes nothing when tracking is off", () => {
    const html = `<a href="https://example.com">x</a>`;
    expect(withTracking(html, { choice: { opens: false, clicks: false }, tokens, publicUrl, projectId, emailId })).toBe(html);
  });

  it("tracks by mode: everything, nothing, or marketing mail only", () => {
    expect(trackingChoiceOf("enabled", false)).toEqual(on);
    expect(trackingChoiceOf("disabled", true)).toEqual({ opens: false, clicks: false });
    expect(trackingChoiceOf("marketing", true)).toEqual(on);
    expect(trackingChoiceOf("marketing", false)).toEqual({ opens: false, clicks: false });
  });
});
