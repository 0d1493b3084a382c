import { randomBytes } from "node:crypto";
import { DomainError, type FieldViolation, validationFailed } from "@herald/errors";
import { eventTypeNames } from "./event-types.js";

export const maxUrlLength = 2_048;
export const maxDescriptionLength = 500;

export interface EndpointFields {
  url?: string | undefined;
  description?: string | undefined;
  eventTypes?: readonly string[] | undefined;
}

function urlViolation(url: string, allowHttp: boolean): FieldViolation | undefined {
  const received = JSON.stringify(url.slice(0, 100));
  const violation = (message: string, code: string): FieldViolation => ({ field: "url", message, code, received });
  if (url.length > maxUrlLength) return violation(`url must be at most ${maxUrlLength} characters`, "too_long");
  if (!URL.canParse(url)) return violation("url must be an absolute URL", "invalid_url");
  const parsed = new URL(url);
  if (parsed.protocol !== "https:" && !(allowHttp && parsed.protocol === "http:")) {
    return violation(allowHttp ? "url must be http:// or https://" : "url must be https://", "invalid_scheme");
  }
  if (parsed.username || parsed.password) return violation("url must not carry credentials", "credentials_in_url");
  return undefined;
}

/** Refuses the fields that are set and wrong, all at once (422 VALIDATION_ERROR). */
export function checkEndpointFields(fields: EndpointFields, allowHttp: boolean): void {
  const violations: FieldViolation[] = [];
  if (fields.url !== undefined) {
    const violation = urlViolation(fields.url, allowHttp);
    if (violation) violations.push(violation);
  }
  if (fields.description !== undefined && fields.description.length > maxDescriptionLength) {
    violations.push({
      field: "description",
      message: `description must be at most ${maxDescriptionLength} characters`,
      code: "too_long",
    });
  }
  for (const [index, type] of (fields.eventTypes ?? []).entries()) {
    if (!eventTypeNames.has(type)) {
      violations.push({
        field: `eventTypes[${index}]`,
        message: `${JSON.stringify(type.slice(0, 100))} is not a webhook event type (GET /settings/webhooks/event-types lists them)`,
        code: "unknown_event_type",
        received: JSON.stringify(type.slice(0, 100)),
      });
    }
  }
  if (violations.length > 0) throw validationFailed("The webhook endpoint is invalid", violations);
}

export function endpointLimitReached(limit: number): DomainError {
  return validationFailed(`A project may have at most ${limit} webhook endpoints`, [
    { field: "url", message: `A project may have at most ${limit} webhook endpoints`, code: "endpoint_limit" },
  ]);
}

/** A Standard Webhooks secret: `whsec_` and 24 random bytes in base64. */
export const newSecret = (): string => `whsec_${randomBytes(24).toString("base64")}`;

/** What the API shows of a secret after its creation. */
export const secretPrefixOf = (secret: string): string => secret.slice(0, 10);

/** msg_ and 16 random bytes in base64url: the message's id and webhook-id. */
export const newMessageId = (): string => `msg_${randomBytes(16).toString("base64url")}`;

export const endpointNotFound = () => new DomainError("not-found", "WEBHOOK_ENDPOINT_NOT_FOUND", "Webhook endpoint not found");
export const messageNotFound = () => new DomainError("not-found", "WEBHOOK_MESSAGE_NOT_FOUND", "Webhook message not found");
