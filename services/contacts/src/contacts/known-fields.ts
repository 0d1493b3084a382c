import type { JsonObject } from "../domain/contact-data.js";
import { type FieldType, inferFieldType } from "../domain/field-type.js";

/**
 * The data keys each project is known to have registered, remembered briefly in
 * memory so that the hot paths write registry rows only for keys that may be new.
 * Forgetting is always safe (the registry insert does nothing for a known key); a
 * stale entry only delays re-registering a key deleted on another replica.
 */
export interface KnownFields {
  /** Keys of the values that the registry may not know yet, each with the type its value implies. */
  unregistered(projectId: string, values: JsonObject): Array<{ key: string; type: FieldType }>;
  remember(projectId: string, keys: string[]): void;
  /** One key (DeleteField) or all of a project's (a wipe). */
  forget(projectId: string, key?: string): void;
}

export function createKnownFields(options: { ttlMs: number; maxProjects?: number; now?: () => number }): KnownFields {
  const maxProjects = options.maxProjects ?? 10_000;
  const now = options.now ?? Date.now;
  const projects = new Map<string, { keys: Set<string>; expiresAt: number }>();

  function keysOf(projectId: string): Set<string> | undefined {
    const entry = projects.get(projectId);
    if (!entry) return undefined;
    if (entry.expiresAt > now()) return entry.keys;
    projects.delete(projectId);
    return undefined;
  }

  return {
    unregistered(projectId, values) {
      const known = keysOf(projectId);
      const fields: Array<{ key: string; type: FieldType }> = [];
      for (const [key, value] of Object.entries(values)) {
        if (value !== null && !known?.has(key)) fields.push({ key, type: inferFieldType(value) });
      }
      return fields;
    },
    remember(projectId, keys) {
      if (keys.length === 0 || options.ttlMs <= 0) return;
      let known = keysOf(projectId);
      if (!known) {
        // Map order is insertion order: the first entry is the oldest project.
        if (projects.size >= maxProjects) projects.delete(projects.keys().next().value ?? "");
        known = new Set();
        projects.set(projectId, { keys: known, expiresAt: now() + options.ttlMs });
      }
      for (const key of keys) known.add(key);
    },
    forget(projectId, key) {
      if (key === undefined) projects.delete(projectId);
      else projects.get(projectId)?.keys.delete(key);
    },
  };
}
