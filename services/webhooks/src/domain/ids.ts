import { DomainError } from "@herald/errors";

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs; anything else names nothing (and must not reach a uuid column). */
export const isId = (value: string): boolean => uuidPattern.test(value);

/** Every request names its project; the gateway resolved it from a key, so anything but a uuid is a caller's bug. */
export function requireProjectId(projectId: string): string {
  if (!isId(projectId)) throw new DomainError("invalid-argument", "INVALID_PROJECT_ID", "project_id must be a project's uuid");
  return projectId;
}
