import type { Client } from "@connectrpc/connect";
import type { Logger } from "@herald/platform";
import type { SystemMailService } from "@herald/proto/herald/delivery/v1/system_mail_service_pb";
import type { ProjectService } from "@herald/proto/herald/identity/v1/project_service_pb";

export interface DisabledEndpoint {
  endpointId: string;
  projectId: string;
  url: string;
  failingSince: Date;
}

/**
 * Tells a project's owners and admins that one of its endpoints was disabled for failing, through delivery's system
 * mail (as identity's reputation warnings go), once per disabling (the idempotency key). Identity keeps who they are
 * (ListProjectAdmins).
 */
export function createAdminNotice(deps: {
  projects: Pick<Client<typeof ProjectService>, "listProjectAdmins">;
  systemMail: Pick<Client<typeof SystemMailService>, "sendSystemEmail">;
  logger: Logger;
}) {
  return async (endpoint: DisabledEndpoint): Promise<void> => {
    const { admins } = await deps.projects.listProjectAdmins({ projectId: endpoint.projectId });
    for (const admin of admins) {
      await deps.systemMail.sendSystemEmail({
        idempotencyKey: `webhook-disabled:${endpoint.endpointId}:${endpoint.failingSince.toISOString()}:${admin.userId}`,
        kind: "webhook_disabled",
        to: admin.email,
        subject: "A webhook endpoint of your Herald project was disabled",
        text: [
          `Herald disabled the webhook endpoint ${endpoint.url} of your project ${endpoint.projectId}:`,
          `every delivery to it has failed since ${endpoint.failingSince.toISOString()}.`,
          "",
          "Events that happen while it is disabled are not queued for it. Once it answers again, enable it in the",
          "project's webhook settings, and send what it missed with Recover.",
        ].join("\n"),
      });
    }
    deps.logger.info({ ...endpoint, admins: admins.length }, "webhook endpoint disabled for failing; admins told");
  };
}
