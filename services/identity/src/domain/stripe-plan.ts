import { type BillingLimits, usageCategories } from "./usage-category.js";

/** Caps per category as STRIPE_PRICE_LIMITS writes them: a number, or null (or absent) for no cap. */
export type PlanCaps = Partial<Record<(typeof usageCategories)[number], number | null>>;

/** The caps a plan gives, as identity stores them. */
export function limitsOfPlan(caps: PlanCaps): BillingLimits {
  const limits: BillingLimits = {};
  for (const category of usageCategories) {
    const value = caps[category];
    if (value !== null && value !== undefined) limits[category] = BigInt(value);
  }
  return limits;
}

/** The Stripe event types that set a project's caps. */
export const capSettingEvents = new Set([
  "customer.subscription.created",
  "customer.subscription.updated",
  "customer.subscription.deleted",
  "invoice.paid",
  "invoice.payment_failed",
]);

/** Subscription statuses under which the plan's caps apply; past_due, unpaid, canceled and the rest get the lapsed caps. */
const payingStatuses = new Set(["active", "trialing"]);

/** What a cap-setting event says about its project's plan. */
export interface PlanChange {
  customerId: string | undefined;
  /** `herald_project_id` of the subscription's metadata (set at checkout), when the event carries it. */
  projectIdHint: string | undefined;
  /** The subscription's prices, in order; the first that STRIPE_PRICE_LIMITS names sets the caps. */
  priceIds: string[];
  /** Whether the plan's caps apply (paid or paying), or the lapsed caps. */
  paying: boolean;
}

type Json = Record<string, unknown>;
const objectOf = (value: unknown): Json | undefined =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
const idOf = (value: unknown): string | undefined =>
  typeof value === "string" ? value : typeof objectOf(value)?.id === "string" ? (objectOf(value)?.id as string) : undefined;
const listOf = (value: unknown): Json[] => {
  const data = objectOf(value)?.data;
  if (!Array.isArray(data)) return [];
  return data.flatMap((item: unknown) => {
    const object = objectOf(item);
    return object ? [object] : [];
  });
};
const hintOf = (metadata: unknown): string | undefined => {
  const hint = objectOf(metadata)?.herald_project_id;
  return typeof hint === "string" && hint !== "" ? hint : undefined;
};

/**
 * Reads a cap-setting event's object (a subscription or an invoice, as API version
 * 2025-03-31 and later shape them, with the older invoice fields as a fallback).
 * Answers undefined for any other event type.
 */
export function planChangeOf(type: string, object: unknown): PlanChange | undefined {
  if (!capSettingEvents.has(type)) return undefined;
  const value = objectOf(object) ?? {};
  const customerId = idOf(value.customer);
  if (type.startsWith("customer.subscription.")) {
    return {
      customerId,
      projectIdHint: hintOf(value.metadata),
      priceIds: listOf(value.items).flatMap((item) => idOf(item.price) ?? []),
      paying: type !== "customer.subscription.deleted" && payingStatuses.has(String(value.status)),
    };
  }
  const subscriptionDetails = objectOf(objectOf(value.parent)?.subscription_details);
  return {
    customerId,
    projectIdHint: hintOf(subscriptionDetails?.metadata) ?? hintOf(objectOf(value.subscription_details)?.metadata),
    priceIds: listOf(value.lines).flatMap((line) => idOf(objectOf(objectOf(line.pricing)?.price_details)?.price) ?? idOf(line.price) ?? []),
    paying: type === "invoice.paid",
  };
}

/**
 * The caps a plan change sets: the lapsed caps when the project is not paying, else those
 * of its first price the map names; undefined when it names none (nothing to set).
 */
export function capsOfPlanChange(
  change: PlanChange,
  prices: ReadonlyMap<string, BillingLimits>,
  lapsed: BillingLimits,
): { limits: BillingLimits; priceId?: string } | undefined {
  if (!change.paying) return { limits: lapsed };
  const priceId = change.priceIds.find((id) => prices.has(id));
  const limits = priceId === undefined ? undefined : prices.get(priceId);
  return limits && priceId ? { limits, priceId } : undefined;
}
