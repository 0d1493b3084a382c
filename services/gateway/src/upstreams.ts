import { type Client, createClient } from "@connectrpc/connect";
import { createRpcClient, createRpcTransport } from "@herald/platform";
import { Health } from "@herald/proto/grpc/health/v1/health_pb";
import { WorkflowsService } from "@herald/proto/herald/automation/v1/workflows_service_pb";
import { CampaignsService } from "@herald/proto/herald/campaigns/v1/campaigns_service_pb";
import { ContactsService } from "@herald/proto/herald/contacts/v1/contacts_service_pb";
import { EventsService } from "@herald/proto/herald/contacts/v1/events_service_pb";
import { JobsService } from "@herald/proto/herald/contacts/v1/jobs_service_pb";
import { SegmentsService } from "@herald/proto/herald/contacts/v1/segments_service_pb";
import { ActivityService } from "@herald/proto/herald/delivery/v1/activity_service_pb";
import { DeliveryService } from "@herald/proto/herald/delivery/v1/delivery_service_pb";
import { DomainsService } from "@herald/proto/herald/delivery/v1/domains_service_pb";
import { EmailsService } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { InboundService } from "@herald/proto/herald/delivery/v1/inbound_service_pb";
import { ProviderEventsService } from "@herald/proto/herald/delivery/v1/provider_events_service_pb";
import { TemplatesService } from "@herald/proto/herald/delivery/v1/templates_service_pb";
import { TrackingService } from "@herald/proto/herald/delivery/v1/tracking_service_pb";
import { UploadsService } from "@herald/proto/herald/delivery/v1/uploads_service_pb";
import { VerificationService } from "@herald/proto/herald/delivery/v1/verification_service_pb";
import { AccountService } from "@herald/proto/herald/identity/v1/account_service_pb";
import { BillingService } from "@herald/proto/herald/identity/v1/billing_service_pb";
import { ProjectService } from "@herald/proto/herald/identity/v1/project_service_pb";
import { WebhooksService } from "@herald/proto/herald/webhooks/v1/webhooks_service_pb";
import type { Config } from "./config.js";

export const upstreamNames = ["identity", "contacts", "delivery", "campaigns", "automation", "webhooks"] as const;

export type UpstreamName = (typeof upstreamNames)[number];

export interface Upstreams {
  health: Record<UpstreamName, Client<typeof Health>>;
  accounts: Client<typeof AccountService>;
  projects: Client<typeof ProjectService>;
  billing: Client<typeof BillingService>;
  contacts: Client<typeof ContactsService>;
  events: Client<typeof EventsService>;
  jobs: Client<typeof JobsService>;
  segments: Client<typeof SegmentsService>;
  domains: Client<typeof DomainsService>;
  templates: Client<typeof TemplatesService>;
  activity: Client<typeof ActivityService>;
  uploads: Client<typeof UploadsService>;
  emails: Client<typeof EmailsService>;
  tracking: Client<typeof TrackingService>;
  inbound: Client<typeof InboundService>;
  providerEvents: Client<typeof ProviderEventsService>;
  verification: Client<typeof VerificationService>;
  /** Delivery's own facts (its mail provider, for /config). */
  deliveryInfo: Client<typeof DeliveryService>;
  workflows: Client<typeof WorkflowsService>;
  campaigns: Client<typeof CampaignsService>;
  webhooks: Client<typeof WebhooksService>;
}

const urlOf = (config: Config, name: UpstreamName): string =>
  ({
    identity: config.IDENTITY_URL,
    contacts: config.CONTACTS_URL,
    delivery: config.DELIVERY_URL,
    campaigns: config.CAMPAIGNS_URL,
    automation: config.AUTOMATION_URL,
    webhooks: config.WEBHOOKS_URL,
  })[name];

/** Connect clients over HTTP/2 with binary protobuf, several connections per upstream. */
export function createUpstreams(config: Config): Upstreams {
  const health = Object.fromEntries(
    upstreamNames.map((name) => [
      name,
      createRpcClient(Health, { baseUrl: urlOf(config, name), timeoutMs: config.HEALTH_TIMEOUT_MS, retries: 0 }),
    ]),
  ) as Record<UpstreamName, Client<typeof Health>>;
  const identity = createRpcTransport({ baseUrl: config.IDENTITY_URL, connections: 4, timeoutMs: 10_000 });
  // /v1/track crosses here on every request: more HTTP/2 connections spread it over more sessions.
  const contacts = createRpcTransport({ baseUrl: config.CONTACTS_URL, connections: 8, timeoutMs: 30_000 });
  const delivery = createRpcTransport({ baseUrl: config.DELIVERY_URL, connections: 2, timeoutMs: 30_000 });
  const automation = createRpcTransport({ baseUrl: config.AUTOMATION_URL, connections: 2, timeoutMs: 30_000 });
  const campaigns = createRpcTransport({ baseUrl: config.CAMPAIGNS_URL, connections: 1, timeoutMs: 30_000 });
  const webhooks = createRpcTransport({ baseUrl: config.WEBHOOKS_URL, connections: 1, timeoutMs: 30_000 });
  return {
    health,
    accounts: createClient(AccountService, identity),
    projects: createClient(ProjectService, identity),
    billing: createClient(BillingService, identity),
    contacts: createClient(ContactsService, contacts),
    events: createClient(EventsService, contacts),
    jobs: createClient(JobsService, contacts),
    segments: createClient(SegmentsService, contacts),
    domains: createClient(DomainsService, delivery),
    templates: createClient(TemplatesService, delivery),
    activity: createClient(ActivityService, delivery),
    uploads: createClient(UploadsService, delivery),
    emails: createClient(EmailsService, delivery),
    tracking: createClient(TrackingService, delivery),
    inbound: createClient(InboundService, delivery),
    providerEvents: createClient(ProviderEventsService, delivery),
    verification: createClient(VerificationService, delivery),
    deliveryInfo: createClient(DeliveryService, delivery),
    workflows: createClient(WorkflowsService, automation),
    campaigns: createClient(CampaignsService, campaigns),
    webhooks: createClient(WebhooksService, webhooks),
  };
}
