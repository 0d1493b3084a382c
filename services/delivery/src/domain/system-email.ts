import type { FieldViolation } from "@herald/errors";
import { isEmailAddress, isOneLine, normaliseAddress } from "./email-input.js";

/** What identity asks delivery to send (SystemMailService.SendSystemEmail). */
export interface SystemEmailInput {
  idempotencyKey: string;
  kind: string;
  to: string;
  subject: string;
  text: string;
  /** When the link inside stops working; undefined: systemEmailDefaultLifetimeMs after the call. */
  expiresAt: Date | undefined;
}

export const systemEmailLimits = { idempotencyKey: 200, kind: 50, subject: 998, text: 100_000 } as const;

/** An account email given no expiry is tried for a day at most. */
export const systemEmailDefaultLifetimeMs = 24 * 60 * 60_000;

const required = (field: string): FieldViolation => ({ field, message: "is required", code: "required" });
const tooLong = (field: string, max: number): FieldViolation => ({
  field,
  message: `must be at most ${max} characters`,
  code: "too_big",
});

/** What is wrong with a request, field by field; empty when it can be queued. */
export function systemEmailViolations(input: SystemEmailInput): FieldViolation[] {
  const violations: FieldViolation[] = [];
  if (!input.idempotencyKey) violations.push(required("idempotencyKey"));
  else if (input.idempotencyKey.length > systemEmailLimits.idempotencyKey) {
    violations.push(tooLong("idempotencyKey", systemEmailLimits.idempotencyKey));
  }
  if (!input.kind) violations.push(required("kind"));
  else if (input.kind.length > systemEmailLimits.kind || !/^[a-z_]+$/.test(input.kind)) {
    violations.push({
      field: "kind",
      message: `must be lower-case letters and _, at most ${systemEmailLimits.kind}`,
      code: "invalid_string",
    });
  }
  if (!input.to) violations.push(required("to"));
  else if (!isEmailAddress(normaliseAddress(input.to)))
    violations.push({ field: "to", message: "must be an email address", code: "invalid_string" });
  if (!input.subject) violations.push(required("subject"));
  else if (input.subject.length > systemEmailLimits.subject) violations.push(tooLong("subject", systemEmailLimits.subject));
  else if (!isOneLine(input.subject)) violations.push({ field: "subject", message: "must be one line", code: "invalid_string" });
  if (!input.text) violations.push(required("text"));
  else if (input.text.length > systemEmailLimits.text) violations.push(tooLong("text", systemEmailLimits.text));
  return violations;
}

const escapeHtml = (text: string): string => text.replaceAll(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

// A URL up to the first space, angle bracket or quote: one character class, so linear in the text.
const urlPattern = /https?:\/\/[^\s<>"']+/g;
// Punctuation that ends a sentence, not the URL before it.
const trailingPunctuation = new Set([".", ",", ";", ":", "!", "?", ")"]);

function linkedLine(line: string): string {
  let html = "";
  let last = 0;
  for (const match of line.matchAll(urlPattern)) {
    let url = match[0];
    while (url.length > 0 && trailingPunctuation.has(url.at(-1) ?? "")) url = url.slice(0, -1);
    html += escapeHtml(line.slice(last, match.index));
    html += `<a href="${escapeHtml(url)}">${escapeHtml(url)}</a>`;
    last = match.index + url.length;
  }
  return html + escapeHtml(line.slice(last));
}

/**
 * The HTML part of an account email: its plain text, escaped, a paragraph per block of lines between
 * blank lines, and each http(s) URL a link to itself. The plain-text part is derived from it when the
 * message is built, so the link reads the same in both.
 */
export function htmlOfText(text: string): string {
  const paragraphs: string[][] = [[]];
  for (const line of text.split("\n")) {
    if (line.trim() === "") {
      if ((paragraphs.at(-1)?.length ?? 0) > 0) paragraphs.push([]);
    } else paragraphs.at(-1)?.push(linkedLine(line.trimEnd()));
  }
  const body = paragraphs
    .filter((lines) => lines.length > 0)
    .map((lines) => `<p>${lines.join("<br>\n")}</p>`)
    .join("\n");
  return `<!doctype html><html><body>\n${body}\n</body></html>`;
}
