import { randomUUID } from "node:crypto";
import { validationFailed } from "@herald/errors";
import type { Db } from "../db/client.js";
import { insertSystemEmail } from "../db/system-emails.js";
import { normaliseAddress } from "../domain/email-input.js";
import { type SystemEmailInput, systemEmailDefaultLifetimeMs, systemEmailViolations } from "../domain/system-email.js";

export type SystemMail = ReturnType<typeof createSystemMail>;

/**
 * The front door of account emails (SystemMailService): a request is validated and stored as
 * PENDING in system_emails, once per idempotency key; the system mail sender takes it from there.
 */
export function createSystemMail(deps: {
  db: Db;
  /** The domain of the Message-ID: SYSTEM_DKIM_DOMAIN. */
  messageIdDomain: string;
  nudgeSender?: () => void;
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());
  return {
    async enqueue(input: SystemEmailInput): Promise<{ id: string; created: boolean }> {
      const violations = systemEmailViolations(input);
      const [first] = violations;
      if (first) throw validationFailed(`Invalid ${first.field}: it ${first.message}`, violations);
      const id = randomUUID();
      const result = await insertSystemEmail(deps.db, {
        id,
        idempotencyKey: input.idempotencyKey,
        kind: input.kind,
        toEmail: normaliseAddress(input.to),
        subject: input.subject,
        text: input.text,
        expiresAt: input.expiresAt ?? new Date(now().getTime() + systemEmailDefaultLifetimeMs),
        messageId: `<${id}@${deps.messageIdDomain}>`,
      });
      if (result.created) deps.nudgeSender?.();
      return result;
    },
  };
}
