import { createCache } from "@herald/platform";
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
  const projects = createCache<string, Set<string>>({ max: options.maxProjects ?? 10_000, ttlMs: options.ttlMs, now: options.now });

  return {
    unregistered(projectId, values) {
      const known = projects.peek(projectId);
      const fields: Array<{ key: string; type: FieldType }> = [];
      for (const [key, value] of Object.entries(values)) {
        if (value !== null && !known?.has(key)) fields.push({ key, type: inferFieldType(value) });
      }
      return fields;
    },
    remember(projectId, keys) {
      if (keys.length === 0 || options.ttlMs <= 0) return;
      let known = projects.peek(projectId);
      if (!known) {
        known = new Set();
        projects.set(projectId, known);
      }
      for (const key of keys) known.add(key);
    },
    forget(projectId, key) {
      if (key === undefined) projects.delete(projectId);
      else projects.peek(projectId)?.delete(key);
    },
  };
}
