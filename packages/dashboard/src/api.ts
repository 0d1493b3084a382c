import { createHeraldClient, HeraldApiError, type HeraldClient, orThrow } from "@herald/client";

export { HeraldApiError, orThrow };

/** The project the dashboard works on, sent as X-Project-Id on project routes (docs/api-decisions.md). */
let currentProject: string | undefined;

export function setCurrentProject(projectId: string | undefined): void {
  currentProject = projectId;
  if (projectId) localStorage.setItem("herald.project", projectId);
}

export const rememberedProject = (): string | null => localStorage.getItem("herald.project");

/** Same origin as the gateway: the session cookie goes along, and no key is ever held by the browser. */
export const api: HeraldClient = createHeraldClient({ baseUrl: window.location.origin, credentials: "same-origin" });

api.use({
  onRequest({ request }) {
    if (currentProject && !request.headers.has("x-project-id")) request.headers.set("x-project-id", currentProject);
    return request;
  },
});

/** The message to show for a failed call: the envelope's message, or the network's. */
export function messageOf(error: unknown): string {
  if (error instanceof HeraldApiError) return error.body?.error.message ?? error.message;
  return error instanceof Error ? error.message : String(error);
}
