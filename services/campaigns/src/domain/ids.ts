import { DomainError } from "@herald/errors";

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs; anything else names nothing (and must not reach a uuid column). */
export const isId = (value: string): boolean => uuidPattern.test(value);

/** Every request names its project; the gateway resolved it from a key, so anything but a uuid is a caller's bug. */
export function requireProjectId(projectId: string): string {
  if (!isId(projectId)) throw new DomainError("invalid-argument", "INVALID_PROJECT_ID", "project_id must be a project's uuid");
  return projectId;
}

/**
 * The uuid just before `id` in Postgres's order of uuids (their bytes): a fan-out cursor that named an erased contact
 * moves there, so that it names nobody and the fan-out still resumes after the same contacts. Undefined for the nil uuid.
 */
export function uuidBefore(id: string): string | undefined {
  const value = BigInt(`0x${id.replaceAll("-", "")}`);
  if (value === 0n) return undefined;
  const hex = (value - 1n).toString(16).padStart(32, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
