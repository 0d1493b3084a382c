import { type BillingLimits, usageCategories } from "../domain/usage-category.js";
import type { Reader, Tx } from "./client.js";

export async function billingLimitsOf(db: Reader, projectId: string): Promise<BillingLimits> {
  const row = await db.billingLimits.findUnique({ where: { projectId } });
  const limits: BillingLimits = {};
  for (const category of usageCategories) {
    const value = row?.[category];
    if (value !== null && value !== undefined) limits[category] = value;
  }
  return limits;
}

/** Replaces every cap: a category missing from the new limits has none. */
export async function replaceBillingLimits(tx: Tx, projectId: string, limits: BillingLimits): Promise<void> {
  const columns = Object.fromEntries(usageCategories.map((category) => [category, limits[category] ?? null]));
  await tx.billingLimits.upsert({ where: { projectId }, create: { projectId, ...columns }, update: columns });
}

export async function billingCustomerOf(db: Reader, projectId: string): Promise<string | undefined> {
  return (await db.billingCustomer.findUnique({ where: { projectId } }))?.stripeCustomerId;
}

/** Keeps the first customer recorded for the project and returns it. */
export async function saveBillingCustomer(db: Reader, projectId: string, stripeCustomerId: string): Promise<string> {
  await db.billingCustomer.createMany({ data: [{ projectId, stripeCustomerId }], skipDuplicates: true });
  return (await db.billingCustomer.findUniqueOrThrow({ where: { projectId } })).stripeCustomerId;
}
