import { validationFailed } from "@herald/errors";
import type { Db } from "../db/client.js";
import { countEndpoints, type EndpointPage, type EndpointWithStats, findEndpoint, listEndpoints, withStats } from "../db/endpoints.js";
import {
  findMessage,
  insertMessages,
  listMessages,
  type MessageRow,
  type MessageStatus,
  messageStatuses,
  requeueFailedSince,
  requeueMessage,
} from "../db/messages.js";
import {
  checkEndpointFields,
  endpointLimitReached,
  endpointNotFound,
  messageNotFound,
  newMessageId,
  newSecret,
} from "../domain/endpoint-input.js";
import { exampleEvent } from "../domain/event-types.js";
import { isId, requireProjectId } from "../domain/ids.js";

export type Webhooks = ReturnType<typeof createWebhooks>;

export interface EndpointInput {
  url?: string | undefined;
  description?: string | undefined;
  eventTypes?: string[] | undefined;
  enabled?: boolean | undefined;
}

const listLimitOf = (limit: number) => (limit <= 0 ? 20 : Math.min(limit, 100));

/** Endpoints and their messages (the RPCs' domain): every call names its project, and another project's ids are not found. */
export function createWebhooks(deps: {
  db: Db;
  allowHttp: boolean;
  maxEndpoints: number;
  rotationGraceMs: number;
  /** The project's endpoints changed: the fan-out's cache forgets them. */
  onEndpointsChanged: (projectId: string) => void;
  /** Messages were queued for now: the dispatcher claims them. */
  onQueued: () => void;
}) {
  const { db } = deps;

  async function endpointOf(projectId: string, id: string) {
    const endpoint = isId(id) ? await findEndpoint(db, requireProjectId(projectId), id) : null;
    if (!endpoint) throw endpointNotFound();
    return endpoint;
  }

  const one = async (row: Parameters<typeof withStats>[1][number]): Promise<EndpointWithStats> => {
    const [endpoint] = await withStats(db, [row]);
    if (!endpoint) throw endpointNotFound();
    return endpoint;
  };

  return {
    list: (projectId: string, limit: number, cursor: string): Promise<EndpointPage> =>
      listEndpoints(db, requireProjectId(projectId), listLimitOf(limit), cursor),

    get: async (projectId: string, id: string) => one(await endpointOf(projectId, id)),

    async create(projectId: string, input: EndpointInput & { url: string }): Promise<{ endpoint: EndpointWithStats; secret: string }> {
      requireProjectId(projectId);
      checkEndpointFields(input, deps.allowHttp);
      const secret = newSecret();
      const row = await db.$transaction(async (tx) => {
        // One creation at a time per project, so that two at once cannot both pass the limit.
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`webhooks.endpoints.${projectId}`}, 0))`;
        if ((await countEndpoints(tx, projectId)) >= deps.maxEndpoints) throw endpointLimitReached(deps.maxEndpoints);
        return tx.endpoint.create({
          data: {
            projectId,
            url: input.url,
            description: input.description ?? "",
            eventTypes: [...new Set(input.eventTypes ?? [])],
            enabled: input.enabled ?? true,
            secret,
          },
        });
      });
      deps.onEndpointsChanged(projectId);
      return { endpoint: await one(row), secret };
    },

    async update(projectId: string, id: string, input: EndpointInput): Promise<EndpointWithStats> {
      const current = await endpointOf(projectId, id);
      checkEndpointFields(input, deps.allowHttp);
      const enabling = input.enabled === true && !current.enabled;
      const row = await db.endpoint.update({
        where: { id: current.id },
        data: {
          ...(input.url === undefined ? {} : { url: input.url }),
          ...(input.description === undefined ? {} : { description: input.description }),
          ...(input.eventTypes === undefined ? {} : { eventTypes: [...new Set(input.eventTypes)] }),
          ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
          // Enabling clears why it was disabled and how long it had failed: its next failure starts the count again.
          ...(enabling ? { disabledReason: null, failingSince: null } : {}),
        },
      });
      deps.onEndpointsChanged(projectId);
      return one(row);
    },

    async remove(projectId: string, id: string): Promise<void> {
      const endpoint = await endpointOf(projectId, id);
      await db.endpoint.deleteMany({ where: { id: endpoint.id, projectId } });
      deps.onEndpointsChanged(projectId);
    },

    async rotateSecret(projectId: string, id: string): Promise<{ secret: string; previousSecretExpiresAt: Date }> {
      const endpoint = await endpointOf(projectId, id);
      const secret = newSecret();
      const previousSecretExpiresAt = new Date(Date.now() + deps.rotationGraceMs);
      await db.endpoint.update({
        where: { id: endpoint.id },
        data: { secret, previousSecret: endpoint.secret, previousSecretExpiresAt },
      });
      return { secret, previousSecretExpiresAt };
    },

    async listMessages(projectId: string, endpointId: string, options: { limit: number; cursor: string; status: string }) {
      const endpoint = await endpointOf(projectId, endpointId);
      if (options.status && !messageStatuses.includes(options.status as MessageStatus)) {
        throw validationFailed("Invalid status", [
          {
            field: "status",
            message: `status must be one of ${messageStatuses.join(", ")}`,
            code: "invalid_enum",
            received: JSON.stringify(options.status.slice(0, 100)),
          },
        ]);
      }
      return listMessages(db, endpoint.projectId, endpoint.id, {
        limit: listLimitOf(options.limit),
        cursor: options.cursor,
        status: (options.status || undefined) as MessageStatus | undefined,
      });
    },

    async retry(projectId: string, endpointId: string, messageId: string): Promise<MessageRow> {
      const endpoint = await endpointOf(projectId, endpointId);
      const message = await requeueMessage(db, endpoint.projectId, endpoint.id, messageId);
      if (!message) throw messageNotFound();
      deps.onQueued();
      return message;
    },

    async recover(projectId: string, endpointId: string, since: Date): Promise<number> {
      const endpoint = await endpointOf(projectId, endpointId);
      const queued = await requeueFailedSince(db, endpoint.projectId, endpoint.id, since);
      if (queued > 0) deps.onQueued();
      return queued;
    },

    async sendTest(projectId: string, endpointId: string, eventType: string): Promise<MessageRow> {
      const endpoint = await endpointOf(projectId, endpointId);
      const event = exampleEvent(eventType, endpoint.projectId);
      if (!event) {
        throw validationFailed("Unknown event type", [
          {
            field: "eventType",
            message: `${JSON.stringify(eventType.slice(0, 100))} is not a webhook event type`,
            code: "unknown_event_type",
            received: JSON.stringify(eventType.slice(0, 100)),
          },
        ]);
      }
      if (!endpoint.enabled) {
        throw validationFailed("The endpoint is disabled", [
          {
            field: "eventType",
            message: "A disabled endpoint receives nothing, test events included: enable it first",
            code: "endpoint_disabled",
          },
        ]);
      }
      const id = newMessageId();
      await insertMessages(db, [
        {
          id,
          projectId: endpoint.projectId,
          endpointId: endpoint.id,
          eventId: `test_${id}`,
          eventType,
          payload: { ...event },
          nextAttemptAt: new Date(),
        },
      ]);
      deps.onQueued();
      const message = await findMessage(db, endpoint.projectId, endpoint.id, id);
      if (!message) throw messageNotFound();
      return message;
    },
  };
}
