import type { paths } from "@herald/client";

export type Project = paths["/users/@me/projects"]["get"]["responses"]["200"]["content"]["application/json"][number];

/**
 * What the shell hands every page: the current project, the signed-in user, the rest of the route, and a way to
 * refresh the project list.
 */
export interface PageProps {
  project: Project;
  user: { email: string };
  route: string[];
  reloadProjects: () => void;
}
