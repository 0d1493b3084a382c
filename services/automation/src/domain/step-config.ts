import { type ConditionTree, type FieldType, validateCondition } from "@herald/conditions";
import { type FieldViolation, validationFailed } from "@herald/errors";
import type { StepType } from "./step-types.js";

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export const delayUnits = { minutes: 60_000, hours: 3_600_000, days: 86_400_000, weeks: 604_800_000 } as const;
export type DelayUnit = keyof typeof delayUnits;

export const webhookMethods = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** The longest a DELAY or a WAIT_FOR_EVENT timeout may wait: one year. */
export const maxWaitMs = 366 * delayUnits.days;

export interface SendEmailConfig {
  templateId?: string;
  subject?: string;
  body?: string;
  from?: string;
  fromName?: string;
  replyTo?: string;
  /** A fixed recipient instead of the contact. */
  to?: string;
}
export interface DelayConfig {
  amount: number;
  unit: DelayUnit;
}
export interface WaitForEventConfig {
  eventName: string;
  /** Seconds. */
  timeout: number;
}
/**
 * The event a new run of the step waits for: a WAIT_FOR_EVENT waits from the moment its run
 * is created, so that an event arriving before the run reaches WAITING is not lost.
 */
export function stepRunWaitingFor(step: { type: string; config: unknown }): string | null {
  if (step.type !== "WAIT_FOR_EVENT") return null;
  const eventName = (step.config as Partial<WaitForEventConfig> | null)?.eventName;
  return typeof eventName === "string" ? eventName : null;
}

export interface ConditionConfig {
  condition: ConditionTree;
}
export interface WebhookConfig {
  url: string;
  method: (typeof webhookMethods)[number];
  headers: Record<string, string>;
  body?: JsonValue;
}
export interface UpdateContactConfig {
  data?: JsonObject;
  subscribed?: boolean;
}
export interface ExitConfig {
  reason: string;
}

export type StepConfig =
  | { type: "SEND_EMAIL"; config: SendEmailConfig }
  | { type: "DELAY"; config: DelayConfig }
  | { type: "WAIT_FOR_EVENT"; config: WaitForEventConfig }
  | { type: "CONDITION"; config: ConditionConfig }
  | { type: "WEBHOOK"; config: WebhookConfig }
  | { type: "UPDATE_CONTACT"; config: UpdateContactConfig }
  | { type: "EXIT"; config: ExitConfig };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

const emailPattern = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[^\s@<>()[\]\\,;:"]+$/;
const eventNamePattern = /^[\w.:-]{1,255}$/;
const headerNamePattern = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;

/** Collects the field violations of one config. */
class ConfigCheck {
  readonly violations: FieldViolation[] = [];

  fail(field: string, code: string, message: string, received?: unknown): undefined {
    this.violations.push({
      field: `config.${field}`,
      code,
      message,
      ...(received === undefined ? {} : { received: JSON.stringify(received)?.slice(0, 200) ?? "" }),
    });
    return undefined;
  }

  text(config: Record<string, unknown>, key: string, options: { required?: boolean; max?: number } = {}): string | undefined {
    const value = config[key];
    if (value === undefined || value === null) {
      return options.required ? this.fail(key, "required", `${key} is required`) : undefined;
    }
    if (typeof value !== "string") return this.fail(key, "invalid_type", `${key} must be a string`, value);
    if (options.required && value.trim() === "") return this.fail(key, "required", `${key} must not be empty`);
    if (value.length > (options.max ?? 100_000))
      return this.fail(key, "too_big", `${key} is longer than ${options.max ?? 100_000} characters`);
    if (value.includes("\u0000") || !value.isWellFormed())
      return this.fail(key, "invalid_string", `${key} holds characters that cannot be stored`);
    return value;
  }

  email(config: Record<string, unknown>, key: string): string | undefined {
    const value = this.text(config, key, { max: 254 });
    if (value !== undefined && !emailPattern.test(value)) return this.fail(key, "invalid_string", `${key} must be an email address`, value);
    return value;
  }
}

/**
 * A step's config checked for its type and returned in normal form, or a VALIDATION_ERROR
 * naming each bad field (`config.<key>`). `fieldType` is the project's registered data
 * field types, for CONDITION trees.
 */
export function validateStepConfig(
  type: StepType,
  input: unknown,
  options: { fieldType: (key: string) => FieldType | undefined; templateId?: string },
): StepConfig {
  const check = new ConfigCheck();
  const config = input === undefined || input === null ? {} : input;
  if (!isObject(config))
    throw validationFailed("Invalid step config", [{ field: "config", code: "invalid_type", message: "config must be an object" }]);
  const result = parse(type, config, check, options);
  if (result === undefined || check.violations.length > 0) throw validationFailed(`Invalid ${type} step config`, check.violations);
  return result;
}

function parse(
  type: StepType,
  config: Record<string, unknown>,
  check: ConfigCheck,
  options: { fieldType: (key: string) => FieldType | undefined; templateId?: string },
): StepConfig | undefined {
  switch (type) {
    case "SEND_EMAIL": {
      const templateId = check.text(config, "templateId", { max: 64 }) ?? options.templateId;
      const subject = check.text(config, "subject", { max: 998 });
      const body = check.text(config, "body", { max: 1_000_000 });
      const from = check.email(config, "from");
      const fromName = check.text(config, "fromName", { max: 200 });
      const replyTo = check.email(config, "replyTo");
      const to = check.email(config, "to");
      if (subject !== undefined && /[\r\n]/.test(subject)) check.fail("subject", "invalid_string", "subject must be one line");
      if (!templateId) {
        if (subject === undefined || subject.trim() === "") check.fail("subject", "required", "subject is required without a templateId");
        if (body === undefined || body.trim() === "") check.fail("body", "required", "body is required without a templateId");
        if (from === undefined) check.fail("from", "required", "from is required without a templateId");
      }
      return {
        type,
        config: {
          ...(templateId ? { templateId } : {}),
          ...(subject !== undefined ? { subject } : {}),
          ...(body !== undefined ? { body } : {}),
          ...(from !== undefined ? { from } : {}),
          ...(fromName !== undefined ? { fromName } : {}),
          ...(replyTo !== undefined ? { replyTo } : {}),
          ...(to !== undefined ? { to } : {}),
        },
      };
    }
    case "DELAY": {
      const { amount, unit } = config;
      if (amount === undefined) check.fail("amount", "required", "amount is required");
      else if (typeof amount !== "number" || !Number.isInteger(amount) || amount < 1) {
        check.fail("amount", "invalid_number", "amount must be a whole number of at least 1", amount);
      }
      if (unit === undefined) check.fail("unit", "required", "unit is required");
      else if (typeof unit !== "string" || !Object.hasOwn(delayUnits, unit)) {
        check.fail("unit", "invalid_enum_value", `unit must be one of: ${Object.keys(delayUnits).join(", ")}`, unit);
      }
      if (check.violations.length > 0) return undefined;
      const delay = { amount: amount as number, unit: unit as DelayUnit };
      if (delay.amount * delayUnits[delay.unit] > maxWaitMs)
        return check.fail("amount", "too_big", "a delay may last one year at most", amount);
      return { type, config: delay };
    }
    case "WAIT_FOR_EVENT": {
      const eventName = check.text(config, "eventName", { required: true, max: 255 });
      if (eventName !== undefined && !eventNamePattern.test(eventName)) {
        check.fail("eventName", "invalid_string", "eventName must be 1 to 255 letters, digits, '_', '.', ':' or '-'", eventName);
      }
      const { timeout } = config;
      if (timeout === undefined) check.fail("timeout", "required", "timeout (seconds) is required");
      else if (typeof timeout !== "number" || !Number.isInteger(timeout) || timeout < 1 || timeout * 1000 > maxWaitMs) {
        check.fail("timeout", "invalid_number", "timeout must be a whole number of seconds, from 1 to one year", timeout);
      }
      if (check.violations.length > 0 || eventName === undefined) return undefined;
      return { type, config: { eventName, timeout: timeout as number } };
    }
    case "CONDITION": {
      if (config.condition === undefined || config.condition === null) return check.fail("condition", "required", "condition is required");
      const result = validateCondition(config.condition, { fieldType: options.fieldType, root: "config.condition", variables: true });
      if (!result.ok) {
        for (const issue of result.errors) check.violations.push({ field: issue.path, code: issue.code, message: issue.message });
        return undefined;
      }
      return { type, config: { condition: result.tree } };
    }
    case "WEBHOOK": {
      const url = check.text(config, "url", { required: true, max: 2048 });
      // The URL may hold Liquid ({{ }}), rendered per execution; its scheme is fixed here.
      if (url !== undefined && !/^https?:\/\//i.test(url.trim())) {
        check.fail("url", "invalid_url", "url must be an http:// or https:// URL", url);
      }
      const method = config.method ?? "POST";
      if (typeof method !== "string" || !(webhookMethods as readonly string[]).includes(method.toUpperCase())) {
        check.fail("method", "invalid_enum_value", `method must be one of: ${webhookMethods.join(", ")}`, method);
      }
      const headers: Record<string, string> = {};
      if (config.headers !== undefined && config.headers !== null) {
        if (!isObject(config.headers)) check.fail("headers", "invalid_type", "headers must be an object of strings");
        else {
          for (const [name, value] of Object.entries(config.headers)) {
            if (!headerNamePattern.test(name)) check.fail(`headers.${name}`, "invalid_string", "not a valid header name");
            else if (typeof value !== "string" || /[\r\n]/.test(value) || value.includes("\u0000") || value.length > 998) {
              check.fail(`headers.${name}`, "invalid_string", "a header value must be one line of at most 998 characters");
            } else headers[name] = value;
          }
        }
      }
      if (check.violations.length > 0 || url === undefined) return undefined;
      return {
        type,
        config: {
          url: url.trim(),
          method: (method as string).toUpperCase() as WebhookConfig["method"],
          headers,
          ...(config.body === undefined ? {} : { body: config.body as JsonValue }),
        },
      };
    }
    case "UPDATE_CONTACT": {
      const { data, subscribed } = config;
      if (data !== undefined && !isObject(data)) check.fail("data", "invalid_type", "data must be an object (null unsets a key)");
      if (subscribed !== undefined && typeof subscribed !== "boolean")
        check.fail("subscribed", "invalid_type", "subscribed must be true or false");
      if (data === undefined && subscribed === undefined) check.fail("data", "required", "give data, subscribed or both");
      if (isObject(data)) {
        for (const key of Object.keys(data)) {
          if (key.trim() === "" || key.length > 255) check.fail(`data.${key}`, "invalid_string", "a data key must be 1 to 255 characters");
        }
      }
      if (check.violations.length > 0) return undefined;
      return {
        type,
        config: {
          ...(data === undefined ? {} : { data: data as JsonObject }),
          ...(subscribed === undefined ? {} : { subscribed: subscribed as boolean }),
        },
      };
    }
    case "EXIT": {
      const reason = check.text(config, "reason", { max: 1000 });
      return { type, config: { reason: reason ?? "" } };
    }
  }
}
