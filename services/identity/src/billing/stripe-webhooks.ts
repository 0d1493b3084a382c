import { DomainError } from "@herald/errors";
import type { Logger } from "@herald/platform";
import Stripe from "stripe";
import { replaceBillingLimits } from "../db/billing.js";
import type { Db } from "../db/client.js";
import { findProjectById, lockProject } from "../db/projects.js";
import { hasNewerStripeEvent, projectOfCustomer, recordStripeEvent } from "../db/stripe-events.js";
import { isId } from "../domain/ids.js";
import { capsOfPlanChange, type PlanChange, planChangeOf } from "../domain/stripe-plan.js";
import type { BillingLimits } from "../domain/usage-category.js";
import { recordBillingLimitsChanged } from "../events/project-lifecycle.js";

export type StripeEventOutcome = "applied" | "duplicate" | "stale" | "ignored";

export interface StripeWebhooks {
  handle(payload: Uint8Array, signature: string): Promise<{ outcome: StripeEventOutcome; projectId?: string }>;
}

const webhooksDisabled = () =>
  new DomainError("failed-precondition", "BILLING_DISABLED", "Stripe webhooks are not enabled on this deployment", {
    suggestion: "Set STRIPE_WEBHOOK_SECRET to the endpoint's signing secret",
  });

/**
 * POST /webhooks/incoming/stripe: Stripe's events, verified by their signature
 * (`Stripe.webhooks.constructEvent`, which also refuses a timestamp older than five minutes,
 * so a captured event cannot be replayed later), set the project's caps from its plan. An
 * event is applied at most once (its id is recorded in the transaction that sets the caps),
 * and never over a later event of the project, since Stripe does not keep their order.
 */
export function createStripeWebhooks(deps: {
  db: Db;
  logger: Logger;
  /** STRIPE_WEBHOOK_SECRET; unset: every event is refused. */
  secret: string | undefined;
  /** STRIPE_PRICE_LIMITS: the caps each price gives. */
  prices: ReadonlyMap<string, BillingLimits>;
  /** STRIPE_LAPSED_LIMITS: the caps of a project that stopped paying. */
  lapsed: BillingLimits;
  nudgeOutbox?: () => void;
}): StripeWebhooks {
  const { db, logger } = deps;

  /** The project the event is about: the customer's (recorded at checkout), else the subscription's metadata. */
  async function projectOf(change: PlanChange): Promise<string | undefined> {
    const byCustomer = change.customerId ? await projectOfCustomer(db, change.customerId) : undefined;
    if (byCustomer) return byCustomer;
    const hint = change.projectIdHint;
    return hint && isId(hint) && (await findProjectById(db, hint)) ? hint : undefined;
  }

  return {
    async handle(payload, signature) {
      if (!deps.secret) throw webhooksDisabled();
      let event: Stripe.Event;
      try {
        event = Stripe.webhooks.constructEvent(Buffer.from(payload), signature, deps.secret);
      } catch (error) {
        throw new DomainError("invalid-argument", "STRIPE_SIGNATURE_INVALID", "The Stripe-Signature header does not verify this payload", {
          cause: error,
          suggestion: "Stripe signs each event with the endpoint's secret; check STRIPE_WEBHOOK_SECRET",
        });
      }
      if (typeof event.id !== "string" || typeof event.type !== "string" || !Number.isSafeInteger(event.created)) {
        throw new DomainError("invalid-argument", "STRIPE_EVENT_INVALID", "The payload is not a Stripe event (id, type, created)");
      }
      const created = new Date(event.created * 1000);
      const change = planChangeOf(event.type, event.data.object);
      const projectId = change ? await projectOf(change) : undefined;
      const caps = change && projectId ? capsOfPlanChange(change, deps.prices, deps.lapsed) : undefined;
      if (!change || !projectId || !caps) {
        if (change) {
          logger.warn(
            { eventId: event.id, type: event.type, customerId: change.customerId, priceIds: change.priceIds, projectId },
            projectId
              ? "a Stripe event names no price of STRIPE_PRICE_LIMITS: caps unchanged"
              : "a Stripe event of a customer no project has",
          );
        }
        const fresh = await db.$transaction((tx) =>
          recordStripeEvent(tx, { id: event.id, type: event.type, projectId: projectId ?? null, created, applied: false, paying: false }),
        );
        return { outcome: fresh ? "ignored" : "duplicate", ...(projectId ? { projectId } : {}) };
      }
      const outcome = await db.$transaction(async (tx): Promise<StripeEventOutcome> => {
        // One project's events one at a time, so that the order check and the change cannot interleave.
        await lockProject(tx, projectId);
        const stale = await hasNewerStripeEvent(tx, projectId, created, change.paying);
        const fresh = await recordStripeEvent(tx, {
          id: event.id,
          type: event.type,
          projectId,
          created,
          applied: !stale,
          paying: change.paying,
        });
        if (!fresh) return "duplicate";
        if (stale) return "stale";
        await replaceBillingLimits(tx, projectId, caps.limits);
        await recordBillingLimitsChanged(tx, projectId, caps.limits);
        return "applied";
      });
      if (outcome === "applied") {
        deps.nudgeOutbox?.();
        logger.info(
          { eventId: event.id, type: event.type, projectId, priceId: caps.priceId, paying: change.paying },
          "billing caps set from Stripe",
        );
      }
      return { outcome, projectId };
    },
  };
}
