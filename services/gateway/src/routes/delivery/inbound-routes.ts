import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { InboundSettings as InboundSettingsMessage } from "@herald/proto/herald/delivery/v1/inbound_service_pb";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import type { Upstreams } from "../../upstreams.js";
import { Nullable } from "../shared-schemas.js";

const InboundSettings = Type.Object({
  enabled: Type.Boolean(),
  /** The host a receiving domain's MX must name; null when this deployment receives no mail (INBOUND_MX_HOST unset). */
  mxHost: Nullable(Type.String()),
});

const toJson = (settings: InboundSettingsMessage | undefined) => ({
  enabled: settings?.enabled ?? false,
  mxHost: settings?.mxHost || null,
});

/** The project's receiving of mail (docs/api-decisions.md "Receiving mail"): off until an admin switches it on. */
export function registerInboundRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): void {
  const { inbound } = deps.upstreams;
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ["Inbound"];
  api.get(
    "/settings/inbound",
    {
      config: { auth: "project" },
      schema: {
        tags,
        summary: "Whether the project receives mail, and the MX host its domains must name",
        response: { 200: InboundSettings },
      },
    },
    async (request) => toJson((await inbound.getInboundSettings({ projectId: projectOf(request) })).settings),
  );
  api.put(
    "/settings/inbound",
    {
      config: { auth: "project" },
      schema: {
        tags,
        summary: "Switch receiving on or off: mail to the project's verified domains whose MX names mxHost is recorded as email.received",
        body: Type.Object({ enabled: Type.Boolean() }),
        response: { 200: InboundSettings },
      },
    },
    async (request) =>
      toJson((await inbound.updateInboundSettings({ projectId: projectOf(request), enabled: request.body.enabled })).settings),
  );
}
