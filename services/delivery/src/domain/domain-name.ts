import { domainToASCII } from "node:url";

export type DomainNameResult = { ok: true; domain: string } | { ok: false; reason: string };

const label = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A sending domain as users type it, checked as a DNS host name (RFC 1123 labels):
 * lower-cased, one trailing dot dropped, internationalised names turned into their
 * xn-- form; no scheme, path, port, address or wildcard; at least two labels of at most
 * 63 characters, at most 253 in all, and a top-level label that is not all digits.
 */
export function parseDomainName(input: string): DomainNameResult {
  const trimmed = input.trim().toLowerCase().replace(/\.$/, "");
  if (trimmed === "") return { ok: false, reason: "is empty" };
  if (/[/:@?#\s*]/.test(trimmed)) return { ok: false, reason: "must be a bare domain name: no scheme, path, port, spaces or wildcard" };
  // domainToASCII answers "" for what cannot be a host name; printable ASCII passes through unchanged.
  const ascii = /^[ -~]*$/.test(trimmed) ? trimmed : domainToASCII(trimmed);
  if (ascii === "") return { ok: false, reason: "is not a valid internationalised domain name" };
  if (ascii.length > 253) return { ok: false, reason: "must be at most 253 characters" };
  const labels = ascii.split(".");
  if (labels.length < 2) return { ok: false, reason: "must have at least two labels, like example.com" };
  for (const part of labels) {
    if (part.length === 0) return { ok: false, reason: "must not contain empty labels" };
    if (part.length > 63) return { ok: false, reason: "labels must be at most 63 characters" };
    if (!label.test(part)) return { ok: false, reason: "labels hold letters, digits and inner hyphens only" };
  }
  if (/^\d+$/.test(labels.at(-1) ?? "")) return { ok: false, reason: "must be a domain name, not an IP address" };
  return { ok: true, domain: ascii };
}
