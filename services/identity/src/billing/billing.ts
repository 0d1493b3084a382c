import { DomainError, type FieldViolation, validationFailed } from "@herald/errors";
import { billingCustomerOf, billingLimitsOf, replaceBillingLimits, saveBillingCustomer } from "../db/billing.js";
import type { Db } from "../db/client.js";
import { consumptionOf } from "../db/usage.js";
import { validBillingLimits } from "../domain/billing-limits.js";
import { billingPeriodOf } from "../domain/billing-period.js";
import { assertCanManage } from "../domain/roles.js";
import type { BillingLimits, Consumption } from "../domain/usage-category.js";
import { recordBillingLimitsChanged } from "../events/project-lifecycle.js";
import { requireMembership } from "../projects/project-access.js";
import type { InvoiceSummary, Payments } from "./payments.js";

export interface Billing {
  limits(userId: string, projectId: string): Promise<BillingLimits>;
  setLimits(userId: string, projectId: string, limits: BillingLimits): Promise<BillingLimits>;
  consumption(userId: string, projectId: string): Promise<{ start: Date; end: Date; consumption: Consumption; limits: BillingLimits }>;
  checkout(userId: string, projectId: string, request: { priceId: string; successUrl: string; cancelUrl: string }): Promise<string>;
  portal(userId: string, projectId: string, returnUrl: string): Promise<string>;
  invoices(userId: string, projectId: string): Promise<InvoiceSummary[]>;
}

const billingDisabled = () =>
  new DomainError("failed-precondition", "BILLING_DISABLED", "Billing is not enabled on this deployment", {
    suggestion: "Set STRIPE_SECRET_KEY to enable billing",
  });

function validUrls(fields: Record<string, string>): void {
  const violations: FieldViolation[] = [];
  for (const [field, value] of Object.entries(fields)) {
    if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
      violations.push({ field, message: "Must be an http:// or https:// URL", code: "invalid_url", received: JSON.stringify(value) });
    }
  }
  if (violations.length > 0) throw validationFailed("Invalid billing request", violations);
}

/** Caps and metering always; checkout, portal and invoices only when a payment provider is configured. */
export function createBilling(deps: {
  db: Db;
  payments: Payments | undefined;
  /** STRIPE_PRICE_LIMITS's prices: when there are any, checkout takes only these (another price would set no caps). */
  prices?: ReadonlySet<string>;
  nudgeOutbox?: () => void;
}): Billing {
  const { db } = deps;

  /** Owners and admins, on a deployment with payments. */
  async function payingProject(userId: string, projectId: string, action: string) {
    const membership = await requireMembership(db, projectId, userId);
    assertCanManage(membership.role, action);
    if (!deps.payments) throw billingDisabled();
    return { project: membership.project, payments: deps.payments };
  }

  return {
    async limits(userId, projectId) {
      await requireMembership(db, projectId, userId);
      return billingLimitsOf(db, projectId);
    },

    async setLimits(userId, projectId, limits) {
      const { role } = await requireMembership(db, projectId, userId);
      assertCanManage(role, "change billing limits");
      const valid = validBillingLimits(limits);
      await db.$transaction(async (tx) => {
        await replaceBillingLimits(tx, projectId, valid);
        await recordBillingLimitsChanged(tx, projectId, valid, userId);
      });
      deps.nudgeOutbox?.();
      return valid;
    },

    async consumption(userId, projectId) {
      await requireMembership(db, projectId, userId);
      const now = new Date();
      const [consumption, limits] = await Promise.all([consumptionOf(db, projectId, now), billingLimitsOf(db, projectId)]);
      return { ...billingPeriodOf(now), consumption, limits };
    },

    async checkout(userId, projectId, request) {
      const { project, payments } = await payingProject(userId, projectId, "manage billing");
      if (!request.priceId)
        throw validationFailed("Invalid checkout", [{ field: "price_id", message: "Price is required", code: "required" }]);
      if (deps.prices && deps.prices.size > 0 && !deps.prices.has(request.priceId)) {
        throw validationFailed("Invalid checkout", [
          {
            field: "price_id",
            message: "Must be one of the prices of STRIPE_PRICE_LIMITS",
            code: "invalid_enum_value",
            received: JSON.stringify(request.priceId),
          },
        ]);
      }
      validUrls({ success_url: request.successUrl, cancel_url: request.cancelUrl });
      const customerId =
        (await billingCustomerOf(db, projectId)) ??
        (await saveBillingCustomer(db, projectId, await payments.createCustomer({ id: project.id, name: project.name })));
      return payments.createCheckoutSession({ customerId, projectId, ...request });
    },

    async portal(userId, projectId, returnUrl) {
      const { payments } = await payingProject(userId, projectId, "manage billing");
      validUrls({ return_url: returnUrl });
      const customerId = await billingCustomerOf(db, projectId);
      if (!customerId) {
        throw new DomainError("failed-precondition", "BILLING_NOT_SET_UP", "This project has no billing account yet", {
          suggestion: "Start a checkout first",
        });
      }
      return payments.createPortalSession({ customerId, returnUrl });
    },

    async invoices(userId, projectId) {
      const { payments } = await payingProject(userId, projectId, "view invoices");
      const customerId = await billingCustomerOf(db, projectId);
      return customerId ? payments.listInvoices(customerId) : [];
    },
  };
}
