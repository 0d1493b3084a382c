import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { SystemMailService } from "@herald/proto/herald/delivery/v1/system_mail_service_pb";
import type { SystemMail } from "../system-mail/system-mail.js";

export function createSystemMailRpc(deps: { systemMail: SystemMail }): ServiceImpl<typeof SystemMailService> {
  return {
    async sendSystemEmail(request) {
      const { id, created } = await deps.systemMail.enqueue({
        idempotencyKey: request.idempotencyKey,
        kind: request.kind,
        to: request.to,
        subject: request.subject,
        text: request.text,
        expiresAt: request.expiresAt ? timestampDate(request.expiresAt) : undefined,
      });
      return { emailId: id, created };
    },
  };
}
