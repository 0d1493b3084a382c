import type { FieldViolation } from "@herald/errors";
import { type EditorSource, parseEditorSource } from "@herald/rendering";

/** Bounds of a campaign's fields (docs/api-decisions.md "Campaigns"), those of templates; the body's is the renderer's source limit. */
export const campaignLimits = {
  name: 200,
  description: 1_000,
  subject: 998,
  body: 500_000,
  fromName: 200,
  address: 254,
} as const;

export const campaignTypes = ["TRANSACTIONAL", "MARKETING", "HEADLESS"] as const;
export type CampaignType = (typeof campaignTypes)[number];

export const audienceTypes = ["ALL", "SEGMENT", "FILTERED"] as const;
export type AudienceType = (typeof audienceTypes)[number];

export type JsonObject = { [key: string]: unknown };

/** A create or a replace, as the RPC layer hands it over: a field left out is undefined. */
export interface CampaignFieldsInput {
  name?: string;
  description?: string;
  subject?: string;
  body?: string;
  from?: string;
  fromName?: string;
  replyTo?: string;
  type?: CampaignType;
  audienceType?: AudienceType;
  audienceCondition?: JsonObject;
  segmentId?: string;
  /** JSON text of the editor's source; undefined or "": none. */
  editor?: string;
}

export interface CampaignFields {
  name: string;
  description: string | null;
  subject: string;
  body: string;
  fromAddress: string;
  fromName: string | null;
  replyTo: string | null;
  type: CampaignType;
  audienceType: AudienceType;
  audienceCondition: JsonObject | null;
  segmentId: string | null;
  editor: EditorSource | null;
}

// Deliberately loose, as delivery's queue is: one @, no spaces or angle brackets, a dot in the domain.
const addressPattern = /^[^\s@<>()",;:\\]+@[^\s@<>()",;:\\]+\.[^\s@<>()",;:\\]+$/;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const lineBreak = /[\r\n]/;

/** An address as stored: trimmed, its domain in lower case. */
function addressOf(raw: string): string | undefined {
  const trimmed = raw.trim();
  if (trimmed.length > campaignLimits.address || !addressPattern.test(trimmed)) return undefined;
  const at = trimmed.lastIndexOf("@");
  return `${trimmed.slice(0, at)}@${trimmed.slice(at + 1).toLowerCase()}`;
}

const violation = (field: string, message: string, code: string): FieldViolation => ({ field, message, code });

const blankToNull = (value: string | undefined): string | null => (value === undefined || value.trim() === "" ? null : value);

/**
 * The shape checks of a create or a replace, without I/O: required fields, bounds, addresses,
 * and the audience's own rule (SEGMENT needs segmentId, FILTERED needs audienceCondition). The
 * caller checks what needs another service: the segment, the condition tree, the sender's domain.
 */
export function checkCampaignFields(
  input: CampaignFieldsInput,
): { ok: true; fields: CampaignFields } | { ok: false; violations: FieldViolation[] } {
  const violations: FieldViolation[] = [];
  const required = (field: string, value: string | undefined, max: number, min = 1) => {
    if (value === undefined || value.trim().length < min) violations.push(violation(field, "is required", "required"));
    else if (value.length > max) violations.push(violation(field, `must be at most ${max} characters`, "too_big"));
  };
  required("name", input.name, campaignLimits.name);
  required("subject", input.subject, campaignLimits.subject);
  if (input.subject !== undefined && lineBreak.test(input.subject))
    violations.push(violation("subject", "must be one line", "invalid_string"));
  required("body", input.body, campaignLimits.body);
  if (input.description !== undefined && input.description.length > campaignLimits.description) {
    violations.push(violation("description", `must be at most ${campaignLimits.description} characters`, "too_big"));
  }
  if (input.fromName !== undefined && (input.fromName.length > campaignLimits.fromName || lineBreak.test(input.fromName))) {
    violations.push(violation("fromName", `must be one line of at most ${campaignLimits.fromName} characters`, "too_big"));
  }
  const fromAddress = input.from === undefined ? undefined : addressOf(input.from);
  if (input.from === undefined || input.from.trim() === "") violations.push(violation("from", "is required", "required"));
  else if (!fromAddress) violations.push(violation("from", "must be an email address like news@example.com", "invalid_string"));
  const replyTo = blankToNull(input.replyTo);
  const replyToAddress = replyTo === null ? null : addressOf(replyTo);
  if (replyTo !== null && !replyToAddress) violations.push(violation("replyTo", "must be an email address", "invalid_string"));

  const audienceType = input.audienceType;
  if (!audienceType) violations.push(violation("audienceType", "is required: ALL, SEGMENT or FILTERED", "required"));
  if (audienceType === "SEGMENT") {
    if (!input.segmentId) violations.push(violation("segmentId", "is required when audienceType is SEGMENT", "required"));
    else if (!uuidPattern.test(input.segmentId)) violations.push(violation("segmentId", "must be a segment id (uuid)", "invalid_string"));
  }
  if (audienceType === "FILTERED" && !input.audienceCondition) {
    violations.push(violation("audienceCondition", "is required when audienceType is FILTERED", "required"));
  }
  const editor = parseEditorSource(input.editor ?? "");
  if (!editor.ok) violations.push(editor.violation);
  if (violations.length > 0 || !audienceType || !fromAddress || !editor.ok) return { ok: false, violations };
  return {
    ok: true,
    fields: {
      name: (input.name ?? "").trim(),
      description: blankToNull(input.description),
      subject: input.subject ?? "",
      body: input.body ?? "",
      fromAddress,
      fromName: blankToNull(input.fromName),
      replyTo: replyToAddress ?? null,
      type: input.type ?? "MARKETING",
      audienceType,
      // The audience's other field is dropped: a SEGMENT campaign keeps no condition, and the reverse.
      audienceCondition: audienceType === "FILTERED" ? (input.audienceCondition ?? null) : null,
      segmentId: audienceType === "SEGMENT" ? (input.segmentId ?? "").toLowerCase() : null,
      editor: editor.source,
    },
  };
}

/** How far ahead a campaign may be scheduled. */
export const maxScheduleAheadMs = 365 * 24 * 60 * 60 * 1000;
