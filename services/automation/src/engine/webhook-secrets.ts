import { randomBytes } from "node:crypto";
import type { Db } from "../db/client.js";

const newSecret = () => `whsec_${randomBytes(32).toString("base64url")}`;

/** The per-project secret WEBHOOK steps sign with: created on first use, replaced by rotate. */
export function createWebhookSecrets(deps: { db: Db }) {
  const { db } = deps;
  return {
    async get(projectId: string): Promise<{ secret: string; createdAt: Date }> {
      // Two first uses at once: one insert wins, both read it.
      await db.webhookSecret.createMany({ data: [{ projectId, secret: newSecret() }], skipDuplicates: true });
      return db.webhookSecret.findUniqueOrThrow({ where: { projectId } });
    },
    rotate: (projectId: string) =>
      db.webhookSecret.upsert({
        where: { projectId },
        create: { projectId, secret: newSecret() },
        update: { secret: newSecret(), createdAt: new Date() },
      }),
  };
}

export type WebhookSecrets = ReturnType<typeof createWebhookSecrets>;
