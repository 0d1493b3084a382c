import { randomUUID } from "node:crypto";
import cookie from "@fastify/cookie";
import { internalRpcToken, type Logger, type Metrics } from "@herald/platform";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import type { Redis } from "ioredis";
import type { ApiKeyCache } from "./auth/api-key-cache.js";
import { registerAuthentication } from "./auth/authenticate.js";
import { createLoginBackoff } from "./auth/login-backoff.js";
import type { SessionCache } from "./auth/session-cache.js";
import type { Config } from "./config.js";
import { registerDepthRefusal } from "./http/body-depth.js";
import { registerErrorHandling } from "./http/errors.js";
import { registerIdempotency } from "./http/idempotency.js";
import { registerHttpMetrics } from "./http/metrics.js";
import { registerNulRefusal } from "./http/nul-characters.js";
import { registerOpenApi } from "./http/openapi.js";
import { registerRateLimit } from "./http/rate-limit.js";
import { registerTracing } from "./http/tracing.js";
import { registerExecutionRoutes } from "./routes/automation/execution-routes.js";
import { registerWorkflowRoutes } from "./routes/automation/workflow-routes.js";
import { registerCampaignAnalyticsRoutes } from "./routes/campaigns/analytics-routes.js";
import { registerCampaignRoutes } from "./routes/campaigns/campaign-routes.js";
import { registerConfigRoute } from "./routes/config.js";
import { registerAudienceRoutes } from "./routes/contacts/audience-routes.js";
import { registerContactExportRoute } from "./routes/contacts/contact-export-route.js";
import { registerContactRoutes } from "./routes/contacts/contact-routes.js";
import { registerEventRoutes } from "./routes/contacts/event-routes.js";
import { registerJobRoutes } from "./routes/contacts/job-routes.js";
import { registerSegmentRoutes } from "./routes/contacts/segment-routes.js";
import { registerDashboard } from "./routes/dashboard.js";
import { registerActivityRoutes } from "./routes/delivery/activity-routes.js";
import { registerDomainRoutes } from "./routes/delivery/domain-routes.js";
import { registerInboundRoutes } from "./routes/delivery/inbound-routes.js";
import { registerSendRoutes } from "./routes/delivery/send-routes.js";
import { registerTemplateRoutes } from "./routes/delivery/template-routes.js";
import { registerTrackingRoutes } from "./routes/delivery/tracking-routes.js";
import { registerUploadRoutes } from "./routes/delivery/upload-routes.js";
import { registerVerifyRoutes } from "./routes/delivery/verify-routes.js";
import { registerWebhookRoutes } from "./routes/delivery/webhook-routes.js";
import { registerEditorSource } from "./routes/editor-source.js";
import { registerHealthRoute } from "./routes/health.js";
import { registerAuthRoutes } from "./routes/identity/auth-routes.js";
import { registerBillingRoutes } from "./routes/identity/billing-routes.js";
import { registerMemberRoutes } from "./routes/identity/member-routes.js";
import { registerOperatorRoutes } from "./routes/identity/operator-routes.js";
import { registerProjectRoutes } from "./routes/identity/project-routes.js";
import { registerStripeWebhookRoutes } from "./routes/identity/stripe-webhook-routes.js";
import { registerRetentionRoutes } from "./routes/settings/retention-routes.js";
import { registerWebhookEndpointRoutes } from "./routes/webhooks/webhook-endpoint-routes.js";
import type { Upstreams } from "./upstreams.js";

export interface Deps {
  config: Config;
  logger: Logger;
  upstreams: Upstreams;
  redis: Redis;
  keys: ApiKeyCache;
  sessions: SessionCache;
  version: string;
  /** RED per route (http/metrics.ts); tests that build a gateway of their own leave it out. */
  metrics?: Metrics;
}

/** Fastify runs a hop count as "the nearest N proxies", but types only the function form of it. */
const trustProxyOf = (trust: Config["TRUST_PROXY"]) => (typeof trust === "number" ? (_address: string, hop: number) => hop < trust : trust);

/** The REST edge without listening; tests call it and inject requests or listen on a free port. */
export async function build(deps: Deps): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    // Fastify types its logger with the pino release it bundles; ours is the same API.
    loggerInstance: deps.logger as FastifyBaseLogger,
    // One line per request costs more than the request itself on the hot paths; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    bodyLimit: 1024 * 1024,
    // Click-redirect tokens carry the link's URL (routes/delivery/tracking-routes.ts).
    maxParamLength: 16_384,
    trustProxy: trustProxyOf(config.TRUST_PROXY),
    ajv: { customOptions: { allErrors: true, removeAdditional: false, coerceTypes: false } },
  });
  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
  });
  registerTracing(app);
  if (deps.metrics) registerHttpMetrics(app, deps.metrics);
  registerErrorHandling(app);
  // Fastify listens for the server's 'error' only until it listens; one after (accepting past the open-files limit) would end the process.
  app.server.on("error", (error) => app.log.error({ err: error }, "the HTTP server reported an error"));
  await app.register(cookie);
  await registerOpenApi(app, { publicUrl: config.PUBLIC_URL, version: deps.version });
  registerEditorSource(app);
  const authFailures = await registerRateLimit(app, {
    redis: deps.redis,
    perMinute: config.RATE_LIMIT_PER_MINUTE,
    publicKeyPerMinute: config.PUBLIC_KEY_RATE_PER_MINUTE,
    authFailuresPerMinute: config.AUTH_FAILURE_RATE_PER_MINUTE,
    recipientLinksPerMinute: config.RECIPIENT_RATE_PER_MINUTE,
    signUpsPerHour: config.SIGNUP_RATE_PER_HOUR,
  });
  registerAuthentication(app, { ...deps, authFailures, publicUrl: config.PUBLIC_URL });
  registerIdempotency(app, { redis: deps.redis, ttlHours: config.IDEMPOTENCY_TTL_HOURS });
  registerNulRefusal(app);
  registerDepthRefusal(app);

  registerConfigRoute(app, { publicUrl: config.PUBLIC_URL, upstreams: deps.upstreams });
  registerHealthRoute(app, { upstreams: deps.upstreams, internalToken: internalRpcToken() });
  registerOperatorRoutes(app, { upstreams: deps.upstreams, operatorToken: config.OPERATOR_TOKEN });
  const loginBackoff = createLoginBackoff({
    redis: deps.redis,
    freeFailuresPerAccount: config.LOGIN_FREE_FAILURES_PER_ACCOUNT,
    freeFailuresPerIp: config.LOGIN_FREE_FAILURES_PER_IP,
    baseDelaySeconds: config.LOGIN_BACKOFF_BASE_SECONDS,
    maxDelaySeconds: config.LOGIN_BACKOFF_MAX_SECONDS,
  });
  registerAuthRoutes(app, { upstreams: deps.upstreams, sessions: deps.sessions, loginBackoff, publicUrl: config.PUBLIC_URL });
  registerProjectRoutes(app, { upstreams: deps.upstreams, keys: deps.keys, sessions: deps.sessions });
  registerMemberRoutes(app, { upstreams: deps.upstreams, sessions: deps.sessions });
  registerBillingRoutes(app, { upstreams: deps.upstreams, publicUrl: config.PUBLIC_URL });
  registerContactRoutes(app, { upstreams: deps.upstreams });
  registerContactExportRoute(app, { upstreams: deps.upstreams });
  registerEventRoutes(app, { upstreams: deps.upstreams });
  await registerJobRoutes(app, { upstreams: deps.upstreams });
  registerSegmentRoutes(app, { upstreams: deps.upstreams });
  registerAudienceRoutes(app, { upstreams: deps.upstreams });
  registerWorkflowRoutes(app, { upstreams: deps.upstreams });
  registerExecutionRoutes(app, { upstreams: deps.upstreams });
  registerDomainRoutes(app, { upstreams: deps.upstreams });
  registerTemplateRoutes(app, { upstreams: deps.upstreams });
  registerCampaignRoutes(app, { upstreams: deps.upstreams });
  registerCampaignAnalyticsRoutes(app, { upstreams: deps.upstreams });
  registerActivityRoutes(app, { upstreams: deps.upstreams });
  await registerUploadRoutes(app, { upstreams: deps.upstreams, publicUrl: config.PUBLIC_URL, maxBytes: config.UPLOAD_MAX_BYTES });
  await registerSendRoutes(app, { upstreams: deps.upstreams });
  registerVerifyRoutes(app, { upstreams: deps.upstreams });
  registerInboundRoutes(app, { upstreams: deps.upstreams });
  registerRetentionRoutes(app, { upstreams: deps.upstreams });
  registerWebhookEndpointRoutes(app, { upstreams: deps.upstreams });
  await registerTrackingRoutes(app, { upstreams: deps.upstreams, publicUrl: config.PUBLIC_URL });
  await registerWebhookRoutes(app, { upstreams: deps.upstreams });
  await registerStripeWebhookRoutes(app, { upstreams: deps.upstreams });
  await registerDashboard(app);
  return app;
}
