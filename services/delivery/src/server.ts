import { createHealthState, createRpcServer, type Logger, type Metrics, type RpcServer, serverInterceptors } from "@herald/platform";
import type { ServiceInfo } from "@herald/proto/herald/common/v1/service_info_pb";
import { ActivityService } from "@herald/proto/herald/delivery/v1/activity_service_pb";
import { CampaignSendsService } from "@herald/proto/herald/delivery/v1/campaign_sends_service_pb";
import { DeliveryService } from "@herald/proto/herald/delivery/v1/delivery_service_pb";
import { DomainsService } from "@herald/proto/herald/delivery/v1/domains_service_pb";
import { EmailsService } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { InboundService } from "@herald/proto/herald/delivery/v1/inbound_service_pb";
import { ProviderEventsService } from "@herald/proto/herald/delivery/v1/provider_events_service_pb";
import { SystemMailService } from "@herald/proto/herald/delivery/v1/system_mail_service_pb";
import { TemplatesService } from "@herald/proto/herald/delivery/v1/templates_service_pb";
import { TrackingService } from "@herald/proto/herald/delivery/v1/tracking_service_pb";
import { UploadsService } from "@herald/proto/herald/delivery/v1/uploads_service_pb";
import { VerificationService } from "@herald/proto/herald/delivery/v1/verification_service_pb";
import { createActivity } from "./activity/activity.js";
import type { EmailRetentionSettings } from "./activity/retention.js";
import type { CampaignSends } from "./campaign-sends/campaign-sends.js";
import type { Db } from "./db/client.js";
import { sendLimits } from "./domain/send-request.js";
import { exportContactEmails } from "./emails/contact-export.js";
import type { Emails } from "./emails/emails.js";
import type { SesNotifications } from "./feedback/ses-notifications.js";
import type { InboundSettings } from "./inbound/inbound-settings.js";
import { createActivityRpc } from "./rpc/activity-rpc.js";
import { createCampaignSendsRpc } from "./rpc/campaign-sends-rpc.js";
import { createDeliveryRpc } from "./rpc/delivery-rpc.js";
import { createDomainsRpc } from "./rpc/domains-rpc.js";
import { createEmailsRpc } from "./rpc/emails-rpc.js";
import { createInboundRpc } from "./rpc/inbound-rpc.js";
import { createProviderEventsRpc } from "./rpc/provider-events-rpc.js";
import { createSystemMailRpc } from "./rpc/system-mail-rpc.js";
import { createTemplatesRpc } from "./rpc/templates-rpc.js";
import { createTrackingRpc } from "./rpc/tracking-rpc.js";
import { createUploadsRpc } from "./rpc/uploads-rpc.js";
import { createVerificationRpc } from "./rpc/verification-rpc.js";
import type { Domains } from "./sending-domains/domains.js";
import type { Sends } from "./sends/sends.js";
import type { SystemMail } from "./system-mail/system-mail.js";
import type { Templates } from "./templates/templates.js";
import type { Tracking } from "./tracking/tracking.js";
import type { Uploads } from "./uploads/uploads.js";
import type { Verification } from "./verification/verification.js";

export interface Deps {
  db: Db;
  logger: Logger;
  /** RED per RPC; tests that build the server leave it out. */
  metrics?: Metrics;
  info: ServiceInfo;
  /** MAIL_PROVIDER, reported by GetServiceInfo (the gateway's /config says whether SES sends); harnesses may leave it out. */
  mailProvider?: string;
  /** Shared with the background check that main.ts runs. */
  domains: Domains;
  templates: Templates;
  /** The send queue's front door; the dispatcher that empties it runs beside the server (main.ts). */
  emails: Emails;
  /** Image uploads; unset in harnesses that leave them out, which then do not serve UploadsService. */
  uploads?: Uploads;
  /** The campaigns service's batches (CampaignSendsService). */
  campaignSends?: CampaignSends;
  /** POST /v1/send: contacts, rendering and the queue together. */
  sends: Sends;
  /** Opens, clicks, the recipient's pages and the projects' tracking modes. */
  tracking: Tracking;
  /** What SES reports after a send (bounces, complaints, deliveries), through SNS. */
  sesNotifications: SesNotifications;
  /** POST /v1/verify. */
  verification: Verification;
  /** Account emails from identity (SystemMailService); the sender that empties their queue runs beside the server (main.ts). Unset in harnesses that leave them out. */
  systemMail?: SystemMail;
  /** Whether each project receives mail (InboundService); unset in harnesses that leave it out. */
  inboundSettings?: InboundSettings;
  /** The projects' windows of email content and activity (GET/PUT /settings/retention), which main.ts's expiry reads too. */
  emailRetention: EmailRetentionSettings;
}

export function build(deps: Deps): RpcServer {
  return createRpcServer({
    health: createHealthState([
      DeliveryService.typeName,
      DomainsService.typeName,
      TemplatesService.typeName,
      EmailsService.typeName,
      ActivityService.typeName,
      TrackingService.typeName,
      ProviderEventsService.typeName,
      VerificationService.typeName,
      ...(deps.systemMail ? [SystemMailService.typeName] : []),
      ...(deps.inboundSettings ? [InboundService.typeName] : []),
      ...(deps.uploads ? [UploadsService.typeName] : []),
      ...(deps.campaignSends ? [CampaignSendsService.typeName] : []),
    ]),
    interceptors: serverInterceptors(deps),
    logger: deps.logger,
    metrics: deps.metrics,
    // A send: its message as sent is at most 40 MB (sendLimits.messageBytes, attachments base64-encoded), more than
    // the attachments' bytes and the parts it is made of; the rest is the call's recipients and fields.
    readMaxBytes: sendLimits.messageBytes + 8 * 1024 * 1024,
    routes: (router) => {
      router.service(DeliveryService, createDeliveryRpc(deps));
      router.service(DomainsService, createDomainsRpc({ domains: deps.domains }));
      router.service(TemplatesService, createTemplatesRpc({ templates: deps.templates }));
      router.service(
        EmailsService,
        createEmailsRpc({
          emails: deps.emails,
          sends: deps.sends,
          exportContactEmails: (request) => exportContactEmails(deps.db, request),
          logger: deps.logger,
        }),
      );
      router.service(
        ActivityService,
        createActivityRpc({
          activity: createActivity({ db: deps.db, activitySince: deps.emailRetention.activitySince }),
          retention: deps.emailRetention,
        }),
      );
      router.service(TrackingService, createTrackingRpc({ tracking: deps.tracking }));
      router.service(ProviderEventsService, createProviderEventsRpc({ sesNotifications: deps.sesNotifications }));
      router.service(VerificationService, createVerificationRpc({ verification: deps.verification }));
      if (deps.systemMail) router.service(SystemMailService, createSystemMailRpc({ systemMail: deps.systemMail }));
      if (deps.inboundSettings) router.service(InboundService, createInboundRpc({ inboundSettings: deps.inboundSettings }));
      if (deps.uploads) router.service(UploadsService, createUploadsRpc({ uploads: deps.uploads }));
      if (deps.campaignSends) router.service(CampaignSendsService, createCampaignSendsRpc({ campaignSends: deps.campaignSends }));
    },
  });
}
