import type { Db } from "../db/client.js";
import { findReceiveInbound, saveReceiveInbound } from "../db/inbound.js";
import { requireProjectId } from "../domain/ids.js";

export type InboundSettings = ReturnType<typeof createInboundSettings>;

/** A project's receiving switch (project_settings.receive_inbound, off by default) and where its MX must point. */
export function createInboundSettings(deps: { db: Db; mxHost: string | undefined }) {
  const settingsOf = (enabled: boolean) => ({ enabled, mxHost: deps.mxHost ?? "" });
  return {
    async get(projectId: string) {
      return settingsOf(await findReceiveInbound(deps.db, requireProjectId(projectId)));
    },
    async set(projectId: string, enabled: boolean) {
      // Read at every recipient (receiving-domains.ts), never cached: the switch holds at once on every replica.
      await saveReceiveInbound(deps.db, requireProjectId(projectId), enabled);
      return settingsOf(enabled);
    },
  };
}
