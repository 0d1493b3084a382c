import { createHealthState, createRpcServer, type Logger, type Metrics, type RpcServer, serverInterceptors } from "@herald/platform";
import type { ServiceInfo } from "@herald/proto/herald/common/v1/service_info_pb";
import { AccountService } from "@herald/proto/herald/identity/v1/account_service_pb";
import { BillingService } from "@herald/proto/herald/identity/v1/billing_service_pb";
import { IdentityService } from "@herald/proto/herald/identity/v1/identity_service_pb";
import { ProjectService } from "@herald/proto/herald/identity/v1/project_service_pb";
import type { Redis } from "ioredis";
import { createAccounts } from "./accounts/accounts.js";
import { createAuthEmailLimiter } from "./accounts/auth-email-limiter.js";
import { createHashingQueues } from "./accounts/hashing-limit.js";
import { createOAuthSignIn } from "./accounts/oauth-sign-in.js";
import { createSessions } from "./accounts/sessions.js";
import { createBilling } from "./billing/billing.js";
import type { Payments } from "./billing/payments.js";
import { createStripeWebhooks } from "./billing/stripe-webhooks.js";
import { type Config, reputationThresholdsOf } from "./config.js";
import type { Db } from "./db/client.js";
import { createPasswordHasher } from "./domain/password.js";
import { createSessionTokens } from "./domain/session-token.js";
import { limitsOfPlan } from "./domain/stripe-plan.js";
import { createOAuthProviders } from "./oauth/providers.js";
import { createInvitationLimiter } from "./projects/invitation-limiter.js";
import { createMembers } from "./projects/members.js";
import { createProjects } from "./projects/projects.js";
import { createAccountRpc } from "./rpc/account-rpc.js";
import { createBillingRpc } from "./rpc/billing-rpc.js";
import { createIdentityRpc } from "./rpc/identity-rpc.js";
import { createProjectRpc } from "./rpc/project-rpc.js";

export interface Deps {
  db: Db;
  redis: Redis;
  logger: Logger;
  /** RED per RPC; tests that build the server leave it out. */
  metrics?: Metrics;
  info: ServiceInfo;
  config: Config;
  /** Stripe when STRIPE_SECRET_KEY is set; without it billing's payment calls answer BILLING_DISABLED. */
  payments: Payments | undefined;
  /** Tells the outbox relay that a commit wrote events. */
  nudgeOutbox: () => void;
  /** Tells the hand-over of account emails to delivery that a commit queued one (main.ts runs it); unset: nothing hands them over. */
  nudgeAccountMail?: () => void;
}

export function build(deps: Deps): RpcServer {
  const { db, logger, config } = deps;
  const sessions = createSessions({ db, tokens: createSessionTokens({ secret: config.JWT_SECRET }), ttlHours: config.SESSION_TTL_HOURS });
  const accounts = createAccounts({
    db,
    logger,
    sessions,
    passwords: createHashingQueues(createPasswordHasher({ logN: config.PASSWORD_SCRYPT_LOG_N }), {
      signIn: { concurrency: config.PASSWORD_HASH_CONCURRENCY, maxWaiting: config.PASSWORD_HASH_MAX_WAITING },
      newPassword: { concurrency: config.SIGNUP_HASH_CONCURRENCY, maxWaiting: config.SIGNUP_HASH_MAX_WAITING },
    }),
    limiter: createAuthEmailLimiter({ redis: deps.redis, limitPerHour: config.AUTH_EMAIL_LIMIT_PER_HOUR }),
    publicUrl: config.PUBLIC_URL,
    signupsDisabled: config.DISABLE_SIGNUPS,
    requireEmailVerification: config.REQUIRE_EMAIL_VERIFICATION,
    ...(deps.nudgeAccountMail ? { emailQueued: deps.nudgeAccountMail } : {}),
  });
  const oauth = createOAuthSignIn({ db, sessions, providers: createOAuthProviders(config), signupsDisabled: config.DISABLE_SIGNUPS });
  const projects = createProjects({ db, nudgeOutbox: deps.nudgeOutbox, reputation: reputationThresholdsOf(config) });
  const members = createMembers({
    db,
    logger,
    publicUrl: config.PUBLIC_URL,
    limiter: createInvitationLimiter({
      redis: deps.redis,
      perProjectPerDay: config.INVITATIONS_PER_PROJECT_PER_DAY,
      perAddressPerDay: config.INVITATIONS_PER_ADDRESS_PER_DAY,
    }),
    ...(deps.nudgeAccountMail ? { emailQueued: deps.nudgeAccountMail } : {}),
  });
  const prices = new Map(Object.entries(config.STRIPE_PRICE_LIMITS).map(([priceId, caps]) => [priceId, limitsOfPlan(caps)]));
  const billing = createBilling({ db, payments: deps.payments, prices: new Set(prices.keys()), nudgeOutbox: deps.nudgeOutbox });
  const stripeWebhooks = createStripeWebhooks({
    db,
    logger,
    secret: config.STRIPE_WEBHOOK_SECRET,
    prices,
    lapsed: limitsOfPlan(config.STRIPE_LAPSED_LIMITS),
    nudgeOutbox: deps.nudgeOutbox,
  });

  return createRpcServer({
    health: createHealthState([IdentityService.typeName, AccountService.typeName, ProjectService.typeName, BillingService.typeName]),
    interceptors: serverInterceptors(deps),
    logger: deps.logger,
    metrics: deps.metrics,
    routes: (router) => {
      router.service(IdentityService, createIdentityRpc(deps));
      router.service(AccountService, createAccountRpc({ db, accounts, sessions, oauth, billingEnabled: deps.payments !== undefined }));
      router.service(ProjectService, createProjectRpc({ projects, members }));
      router.service(BillingService, createBillingRpc({ billing, stripeWebhooks }));
    },
  });
}
