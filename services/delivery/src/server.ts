import { createHealthState, createRpcServer, type Logger, type RpcServer, serverInterceptors } from "@herald/platform";
import type { ServiceInfo } from "@herald/proto/herald/common/v1/service_info_pb";
import { DeliveryService } from "@herald/proto/herald/delivery/v1/delivery_service_pb";
import { DomainsService } from "@herald/proto/herald/delivery/v1/domains_service_pb";
import { EmailsService } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { TemplatesService } from "@herald/proto/herald/delivery/v1/templates_service_pb";
import type { Db } from "./db/client.js";
import type { Domains } from "./domains/domains.js";
import type { Emails } from "./emails/emails.js";
import { createDeliveryRpc } from "./rpc/delivery-rpc.js";
import { createDomainsRpc } from "./rpc/domains-rpc.js";
import { createEmailsRpc } from "./rpc/emails-rpc.js";
import { createTemplatesRpc } from "./rpc/templates-rpc.js";
import type { Templates } from "./templates/templates.js";

export interface Deps {
  db: Db;
  logger: Logger;
  info: ServiceInfo;
  /** Shared with the background check that main.ts runs. */
  domains: Domains;
  templates: Templates;
  /** The send queue's front door; the dispatcher that empties it runs beside the server (main.ts). */
  emails: Emails;
}

export function build(deps: Deps): RpcServer {
  return createRpcServer({
    health: createHealthState([DeliveryService.typeName, DomainsService.typeName, TemplatesService.typeName, EmailsService.typeName]),
    interceptors: serverInterceptors(deps),
    routes: (router) => {
      router.service(DeliveryService, createDeliveryRpc(deps));
      router.service(DomainsService, createDomainsRpc({ domains: deps.domains }));
      router.service(TemplatesService, createTemplatesRpc({ templates: deps.templates }));
      router.service(EmailsService, createEmailsRpc({ emails: deps.emails }));
    },
  });
}
