import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { BillingLimits } from "@herald/proto/herald/identity/v1/billing_service_pb";
import type { FastifyInstance } from "fastify";
import { userOf } from "../../auth/authenticate.js";
import type { Upstreams } from "../../upstreams.js";
import { iso } from "../shared-schemas.js";

const categories = ["transactional", "campaigns", "workflows", "inbound"] as const;
const ProjectId = Type.Object({ id: Type.String({ minLength: 1 }) });
// An int64 on its way to identity; JSON numbers past 2^53 are not exact anyway.
const Cap = Type.Union([Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), Type.Null()]);
const LimitsSchema = Type.Object(
  Object.fromEntries(categories.map((category) => [category, Cap])) as Record<(typeof categories)[number], typeof Cap>,
);
const CountsSchema = Type.Object(
  Object.fromEntries(categories.map((category) => [category, Type.Integer()])) as Record<
    (typeof categories)[number],
    ReturnType<typeof Type.Integer>
  >,
);
const Url = Type.Object({ url: Type.String() });

/** null is "no cap"; bigint counts become JSON numbers (they stay far below 2^53). */
const toLimitsJson = (limits: BillingLimits | undefined) =>
  Object.fromEntries(
    categories.map((category) => [category, limits?.[category] === undefined ? null : Number(limits[category])]),
  ) as Record<(typeof categories)[number], number | null>;

export function registerBillingRoutes(app: FastifyInstance, deps: { upstreams: Upstreams; publicUrl: string }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { billing } = deps.upstreams;
  const session = { auth: "session" } as const;
  const tags = ["Billing"];

  api.get(
    "/users/@me/projects/:id/billing-limits",
    {
      config: session,
      schema: { tags, summary: "Monthly caps per category (null: no cap)", params: ProjectId, response: { 200: LimitsSchema } },
    },
    async (request) => toLimitsJson((await billing.getBillingLimits({ userId: userOf(request), projectId: request.params.id })).limits),
  );

  api.put(
    "/users/@me/projects/:id/billing-limits",
    {
      config: session,
      schema: {
        tags,
        summary: "Replace the monthly caps",
        params: ProjectId,
        body: Type.Partial(LimitsSchema, { additionalProperties: false }),
        response: { 200: LimitsSchema },
      },
    },
    async (request) => {
      const limits = Object.fromEntries(
        categories.flatMap((category) => {
          const value = request.body[category];
          return value === undefined || value === null ? [] : [[category, BigInt(value)]];
        }),
      );
      const answer = await billing.setBillingLimits({ userId: userOf(request), projectId: request.params.id, limits });
      return toLimitsJson(answer.limits);
    },
  );

  api.get(
    "/users/@me/projects/:id/billing-consumption",
    {
      config: session,
      schema: {
        tags,
        summary: "This month's counts per category, with the caps",
        params: ProjectId,
        response: {
          200: Type.Object({ periodStart: Type.String(), periodEnd: Type.String(), consumption: CountsSchema, limits: LimitsSchema }),
        },
      },
    },
    async (request) => {
      const answer = await billing.getBillingConsumption({ userId: userOf(request), projectId: request.params.id });
      return {
        periodStart: answer.periodStart ? timestampDate(answer.periodStart).toISOString() : "",
        periodEnd: answer.periodEnd ? timestampDate(answer.periodEnd).toISOString() : "",
        consumption: Object.fromEntries(categories.map((category) => [category, Number(answer.consumption?.[category] ?? 0n)])) as Record<
          (typeof categories)[number],
          number
        >,
        limits: toLimitsJson(answer.limits),
      };
    },
  );

  const dashboard = (path: string) => new URL(path, deps.publicUrl).toString();

  api.post(
    "/users/@me/projects/:id/checkout",
    {
      config: session,
      schema: {
        tags,
        summary: "Start a Stripe checkout (400 BILLING_DISABLED without Stripe)",
        params: ProjectId,
        body: Type.Object({
          priceId: Type.String({ minLength: 1, maxLength: 255 }),
          successUrl: Type.Optional(Type.String({ format: "uri" })),
          cancelUrl: Type.Optional(Type.String({ format: "uri" })),
        }),
        response: { 200: Url },
      },
    },
    async (request) => {
      const answer = await billing.createCheckoutSession({
        userId: userOf(request),
        projectId: request.params.id,
        priceId: request.body.priceId,
        successUrl: request.body.successUrl ?? dashboard("/billing?checkout=success"),
        cancelUrl: request.body.cancelUrl ?? dashboard("/billing?checkout=cancelled"),
      });
      return { url: answer.url };
    },
  );

  api.post(
    "/users/@me/projects/:id/billing-portal",
    {
      config: session,
      schema: {
        tags,
        summary: "Open the Stripe billing portal (400 BILLING_DISABLED without Stripe)",
        params: ProjectId,
        body: Type.Optional(Type.Object({ returnUrl: Type.Optional(Type.String({ format: "uri" })) })),
        response: { 200: Url },
      },
    },
    async (request) => {
      const answer = await billing.createBillingPortalSession({
        userId: userOf(request),
        projectId: request.params.id,
        returnUrl: request.body?.returnUrl ?? dashboard("/billing"),
      });
      return { url: answer.url };
    },
  );

  api.get(
    "/users/@me/projects/:id/billing-invoices",
    {
      config: session,
      schema: {
        tags,
        summary: "Invoices (400 BILLING_DISABLED without Stripe)",
        params: ProjectId,
        response: {
          200: Type.Array(
            Type.Object({
              id: Type.String(),
              number: Type.String(),
              status: Type.String(),
              amountDue: Type.Integer(),
              currency: Type.String(),
              createdAt: Type.Union([Type.String(), Type.Null()]),
              hostedInvoiceUrl: Type.String(),
            }),
          ),
        },
      },
    },
    async (request) =>
      (await billing.listInvoices({ userId: userOf(request), projectId: request.params.id })).invoices.map((invoice) => ({
        id: invoice.id,
        number: invoice.number,
        status: invoice.status,
        amountDue: Number(invoice.amountDue),
        currency: invoice.currency,
        createdAt: iso(invoice.createdAt),
        hostedInvoiceUrl: invoice.hostedInvoiceUrl,
      })),
  );
}
