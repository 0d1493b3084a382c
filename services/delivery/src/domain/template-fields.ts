import type { FieldViolation } from "@herald/errors";
import { type EditorSource, parseEditorSource } from "@herald/rendering";
import { parseDomainName } from "./domain-name.js";

/** Bounds of a template's fields (docs/api-decisions.md "Templates"); the body's is the renderer's source limit. */
export const templateLimits = {
  name: 200,
  description: 1_000,
  subjectMin: 1,
  subject: 998,
  fromName: 200,
  address: 254,
} as const;

export const templateTypes = ["TRANSACTIONAL", "MARKETING", "HEADLESS"] as const;
export type TemplateType = (typeof templateTypes)[number];

export type AddressResult = { ok: true; address: string; domain: string } | { ok: false; reason: string };

/**
 * A sender or reply-to address: `local@domain`, the domain a valid host name (lower-cased,
 * internationalised names in their xn-- form), the local part printable ASCII without spaces,
 * angle brackets or quotes; at most 254 characters.
 */
export function parseAddress(input: string): AddressResult {
  const trimmed = input.trim();
  if (trimmed.length > templateLimits.address) return { ok: false, reason: `must be at most ${templateLimits.address} characters` };
  const at = trimmed.lastIndexOf("@");
  if (at <= 0 || at === trimmed.length - 1) return { ok: false, reason: "must be an email address like news@example.com" };
  const local = trimmed.slice(0, at);
  if (
    local.length > 64 ||
    !/^[!#-'*+\-/-9=?A-Z^-~.]+$/.test(local) ||
    local.startsWith(".") ||
    local.endsWith(".") ||
    local.includes("..")
  ) {
    return { ok: false, reason: "must be an email address like news@example.com" };
  }
  const domain = parseDomainName(trimmed.slice(at + 1));
  if (!domain.ok) return { ok: false, reason: `has a domain that ${domain.reason}` };
  return { ok: true, address: `${local}@${domain.domain}`, domain: domain.domain };
}

/** What a create or an update sets; undefined leaves a field as it is. */
export interface TemplateFieldsInput {
  name?: string;
  description?: string;
  subject?: string;
  body?: string;
  from?: string;
  fromName?: string;
  replyTo?: string;
  /** JSON text of the editor's source; "" clears it. */
  editor?: string;
}

export interface CheckedTemplateFields {
  name?: string;
  /** null clears the field. */
  description?: string | null;
  subject?: string;
  body?: string;
  from?: { address: string; domain: string };
  fromName?: string | null;
  replyTo?: string | null;
  editor?: EditorSource | null;
}

const violation = (field: string, message: string, code: string, received?: unknown): FieldViolation => ({
  field,
  message,
  code,
  ...(received === undefined ? {} : { received: JSON.stringify(received) }),
});

/** Checks the fields present (Liquid aside: the renderer checks subject and body). */
export function checkTemplateFields(input: TemplateFieldsInput): { fields: CheckedTemplateFields; violations: FieldViolation[] } {
  const violations: FieldViolation[] = [];
  const fields: CheckedTemplateFields = {};
  if (input.name !== undefined) {
    const name = input.name.trim();
    if (name.length === 0) violations.push(violation("name", "must not be empty", "too_small", input.name));
    else if (name.length > templateLimits.name)
      violations.push(violation("name", `must be at most ${templateLimits.name} characters`, "too_big"));
    else fields.name = name;
  }
  if (input.description !== undefined) {
    if (input.description.length > templateLimits.description) {
      violations.push(violation("description", `must be at most ${templateLimits.description} characters`, "too_big"));
    } else {
      fields.description = input.description.trim() === "" ? null : input.description;
    }
  }
  if (input.subject !== undefined) {
    const { subject } = input;
    if (subject.trim().length < templateLimits.subjectMin) violations.push(violation("subject", "must not be empty", "too_small", subject));
    else if (subject.length > templateLimits.subject)
      violations.push(violation("subject", `must be at most ${templateLimits.subject} characters`, "too_big"));
    else if (/[\r\n]/.test(subject)) violations.push(violation("subject", "must not contain a line break", "invalid_string", subject));
    else fields.subject = subject;
  }
  if (input.body !== undefined) {
    if (input.body.trim().length === 0) violations.push(violation("body", "must not be empty", "too_small", input.body));
    else fields.body = input.body;
  }
  if (input.from !== undefined) {
    const from = parseAddress(input.from);
    if (from.ok) fields.from = { address: from.address, domain: from.domain };
    else violations.push(violation("from", from.reason, "invalid_email", input.from));
  }
  if (input.fromName !== undefined) {
    const fromName = input.fromName.trim();
    if (fromName.length > templateLimits.fromName)
      violations.push(violation("fromName", `must be at most ${templateLimits.fromName} characters`, "too_big"));
    else if (/[\r\n]/.test(fromName))
      violations.push(violation("fromName", "must not contain a line break", "invalid_string", input.fromName));
    else fields.fromName = fromName === "" ? null : fromName;
  }
  if (input.replyTo !== undefined) {
    if (input.replyTo.trim() === "") {
      fields.replyTo = null;
    } else {
      const replyTo = parseAddress(input.replyTo);
      if (replyTo.ok) fields.replyTo = replyTo.address;
      else violations.push(violation("replyTo", replyTo.reason, "invalid_email", input.replyTo));
    }
  }
  if (input.editor !== undefined) {
    const editor = parseEditorSource(input.editor);
    if (editor.ok) fields.editor = editor.source;
    else violations.push(editor.violation);
  }
  return { fields, violations };
}

/** The copy's name: "<name> (copy)", cut so it stays within the limit. */
export const duplicateNameOf = (name: string): string => {
  const suffix = " (copy)";
  return `${name.slice(0, templateLimits.name - suffix.length)}${suffix}`;
};
