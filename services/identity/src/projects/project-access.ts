import { DomainError } from "@herald/errors";
import type { Reader } from "../db/client.js";
import { findMembership, findProjectById, type Project, type ProjectWithRole } from "../db/projects.js";
import { isId } from "../domain/ids.js";

/** One answer for "no such project" and "not yours": a user learns nothing of other people's projects. */
export const projectNotFound = () => new DomainError("not-found", "PROJECT_NOT_FOUND", "Project not found");

/** The project with the caller's role in it, or PROJECT_NOT_FOUND. */
export async function requireMembership(db: Reader, projectId: string, userId: string): Promise<ProjectWithRole> {
  if (!isId(projectId) || !isId(userId)) throw projectNotFound();
  const membership = await findMembership(db, projectId, userId);
  if (!membership) throw projectNotFound();
  return membership;
}

/**
 * For reads the gateway also serves to a project's secret key: with a user, that
 * user's membership as usual; with none (user_id ""), the project itself, because
 * the gateway has already authenticated the request by the project's key.
 */
export async function requireProjectReader(db: Reader, projectId: string, userId: string): Promise<Project> {
  if (userId !== "") return (await requireMembership(db, projectId, userId)).project;
  const project = isId(projectId) ? await findProjectById(db, projectId) : null;
  if (!project) throw projectNotFound();
  return project;
}
