import type { Reader, Tx } from "./client.js";

/** The project of a Stripe customer, as the first checkout recorded it. */
export async function projectOfCustomer(db: Reader, stripeCustomerId: string): Promise<string | undefined> {
  return (await db.billingCustomer.findUnique({ where: { stripeCustomerId } }))?.projectId;
}

/** Records a Stripe event as handled; false when its id was handled before (a redelivery). */
export async function recordStripeEvent(
  tx: Tx,
  event: { id: string; type: string; projectId: string | null; created: Date; applied: boolean; paying: boolean },
): Promise<boolean> {
  const { count } = await tx.stripeEvent.createMany({
    data: [
      {
        eventId: event.id,
        type: event.type,
        projectId: event.projectId,
        eventCreated: event.created,
        applied: event.applied,
        paying: event.paying,
      },
    ],
    skipDuplicates: true,
  });
  return count === 1;
}

/**
 * Whether the project's caps were set by a later Stripe event than this one: a later
 * `created`, or the same second with the plan's caps where this one would lapse them
 * (Stripe sends a subscription's first events within one second, in no fixed order).
 */
export async function hasNewerStripeEvent(tx: Tx, projectId: string, created: Date, paying: boolean): Promise<boolean> {
  const newer = await tx.stripeEvent.count({
    where: {
      projectId,
      applied: true,
      OR: [{ eventCreated: { gt: created } }, ...(paying ? [] : [{ eventCreated: created, paying: true }])],
    },
  });
  return newer > 0;
}
