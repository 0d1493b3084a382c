import { Code, ConnectError } from "@connectrpc/connect";
import formbody from "@fastify/formbody";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { TrackingMode } from "@herald/proto/herald/delivery/v1/tracking_service_pb";
import type { FastifyInstance, FastifyReply } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import type { Upstreams } from "../../upstreams.js";
import { confirmSubscribePage, confirmUnsubscribePage, linkNotFoundPage, managePage, subscriptionDonePage } from "./recipient-pages.js";

/** The smallest transparent GIF: the open pixel. */
const pixel = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");

const Token = Type.Object({ token: Type.String({ minLength: 1, maxLength: 16_384 }) });

type ModeName = "enabled" | "disabled" | "marketing";
const modeToProto: Record<ModeName, TrackingMode> = {
  enabled: TrackingMode.ENABLED,
  disabled: TrackingMode.DISABLED,
  marketing: TrackingMode.MARKETING,
};
const modeName = (mode: TrackingMode): ModeName =>
  mode === TrackingMode.DISABLED ? "disabled" : mode === TrackingMode.MARKETING ? "marketing" : "enabled";
const TrackingSettings = Type.Object({ mode: Type.Union([Type.Literal("enabled"), Type.Literal("disabled"), Type.Literal("marketing")]) });

const isLinkNotFound = (error: unknown) => error instanceof ConnectError && error.code === Code.NotFound;

/** Recipient pages are HTML for people: no caching of personal pages, no indexing. */
const html = (reply: FastifyReply, body: string, status = 200) =>
  reply.code(status).header("content-type", "text/html; charset=utf-8").header("cache-control", "no-store").send(body);

/**
 * The links inside emails (ARCHITECTURE.md: served by the gateway, decided by delivery):
 * the open pixel, click redirects, and the recipient's unsubscribe, subscribe and manage
 * pages, including the RFC 8058 one-click POST. No key: the signed token is the credential.
 * And the project's tracking mode, for the dashboard.
 */
export async function registerTrackingRoutes(app: FastifyInstance, deps: { upstreams: Upstreams; publicUrl: string }): Promise<void> {
  const { tracking } = deps.upstreams;
  const base = deps.publicUrl.replace(/\/+$/, "");
  const config = { auth: "none", rateLimitBucket: "recipient-link" } as const;
  const tags = ["Tracking"];

  await app.register(async (scope) => {
    // One-click unsubscribe posts `List-Unsubscribe=One-Click` as a form (RFC 8058); the pages' buttons post forms too.
    await scope.register(formbody);
    const api = scope.withTypeProvider<TypeBoxTypeProvider>();

    api.get("/t/o/:token", { config, schema: { tags, summary: "Open pixel", params: Token, hide: true } }, async (request, reply) => {
      try {
        await tracking.recordOpen({ token: request.params.token });
      } catch (error) {
        // The pixel is answered whatever happens: a lost open must not show a broken image.
        request.log.warn({ err: error }, "an open could not be recorded");
      }
      return reply.header("content-type", "image/gif").header("cache-control", "no-store, no-cache, must-revalidate, private").send(pixel);
    });

    /** The click redirect: GET records the click, HEAD (a link scanner's look) only answers where it leads. */
    async function clickRedirect(reply: FastifyReply, follow: () => Promise<{ url: string }>) {
      try {
        const { url } = await follow();
        // As a Location header can carry it: non-ASCII percent-encoded, the host in xn-- form, tabs and line breaks dropped.
        const location = URL.parse(url)?.href;
        if (location === undefined) return html(reply, linkNotFoundPage(), 404);
        return reply.header("cache-control", "no-store").redirect(location, 302);
      } catch (error) {
        if (isLinkNotFound(error)) return html(reply, linkNotFoundPage(), 404);
        throw error;
      }
    }
    const click = { config, exposeHeadRoute: false, schema: { tags, summary: "Click redirect", params: Token, hide: true } };
    api.get("/t/c/:token", click, (request, reply) => clickRedirect(reply, () => tracking.recordClick({ token: request.params.token })));
    api.head("/t/c/:token", click, (request, reply) => clickRedirect(reply, () => tracking.resolveClick({ token: request.params.token })));

    /** A page of the recipient's: 404 page for a token that does not verify (or a contact deleted since). */
    async function recipientPage(reply: FastifyReply, render: () => Promise<string>) {
      try {
        return html(reply, await render());
      } catch (error) {
        if (isLinkNotFound(error)) return html(reply, linkNotFoundPage(), 404);
        throw error;
      }
    }
    const manageUrl = (token: string) => `${base}/manage/${token}`;
    const schema = (summary: string) => ({ tags, summary, params: Token, hide: true });

    api.get("/unsubscribe/:token", { config, schema: schema("Unsubscribe confirmation page") }, (request, reply) =>
      recipientPage(reply, async () => {
        const { recipient } = await tracking.getRecipient({ token: request.params.token });
        return confirmUnsubscribePage(recipient?.email ?? "", `${base}/unsubscribe/${request.params.token}`);
      }),
    );

    api.post("/unsubscribe/:token", { config, schema: schema("Unsubscribe, including RFC 8058 one-click") }, (request, reply) =>
      recipientPage(reply, async () => {
        const { recipient } = await tracking.setSubscription({ token: request.params.token, subscribed: false });
        return subscriptionDonePage(recipient?.email ?? "", false, manageUrl(request.params.token));
      }),
    );

    api.get("/subscribe/:token", { config, schema: schema("Subscribe confirmation page") }, (request, reply) =>
      recipientPage(reply, async () => {
        const { recipient } = await tracking.getRecipient({ token: request.params.token });
        return confirmSubscribePage(recipient?.email ?? "", `${base}/subscribe/${request.params.token}`);
      }),
    );

    api.post("/subscribe/:token", { config, schema: schema("Subscribe") }, (request, reply) =>
      recipientPage(reply, async () => {
        const { recipient } = await tracking.setSubscription({ token: request.params.token, subscribed: true });
        return subscriptionDonePage(recipient?.email ?? "", true, manageUrl(request.params.token));
      }),
    );

    api.get("/manage/:token", { config, schema: schema("Subscription preferences page") }, (request, reply) =>
      recipientPage(reply, async () => {
        const { recipient } = await tracking.getRecipient({ token: request.params.token });
        return managePage(recipient?.email ?? "", recipient?.subscribed ?? false, manageUrl(request.params.token));
      }),
    );

    api.post(
      "/manage/:token",
      {
        config,
        schema: {
          ...schema("Change subscription preferences"),
          body: Type.Object({ action: Type.Union([Type.Literal("subscribe"), Type.Literal("unsubscribe")]) }),
        },
      },
      (request, reply) =>
        recipientPage(reply, async () => {
          const subscribed = request.body.action === "subscribe";
          const { recipient } = await tracking.setSubscription({ token: request.params.token, subscribed });
          return managePage(recipient?.email ?? "", recipient?.subscribed ?? subscribed, manageUrl(request.params.token));
        }),
    );
  });

  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.get(
    "/settings/tracking",
    {
      config: { auth: "project" },
      schema: { tags, summary: "The project's open and click tracking mode", response: { 200: TrackingSettings } },
    },
    async (request) => ({ mode: modeName((await tracking.getTrackingSettings({ projectId: projectOf(request) })).mode) }),
  );
  api.put(
    "/settings/tracking",
    {
      config: { auth: "project" },
      schema: {
        tags,
        summary: "Set the project's tracking mode: enabled (every email), disabled, or marketing (campaign and workflow mail only)",
        body: TrackingSettings,
        response: { 200: TrackingSettings },
      },
    },
    async (request) => {
      const answer = await tracking.updateTrackingSettings({ projectId: projectOf(request), mode: modeToProto[request.body.mode] });
      return { mode: modeName(answer.mode) };
    },
  );
}
