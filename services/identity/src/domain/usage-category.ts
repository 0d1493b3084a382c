export const usageCategories = ["transactional", "campaigns", "workflows", "inbound"] as const;

export type UsageCategory = (typeof usageCategories)[number];

/** A cap per category; an absent category has no cap. */
export type BillingLimits = Partial<Record<UsageCategory, bigint>>;

export type Consumption = Record<UsageCategory, bigint>;
