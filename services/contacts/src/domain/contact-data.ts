import type { JsonObject, JsonValue } from "@bufbuild/protobuf";

export type { JsonObject, JsonValue };

/**
 * Keys a caller may never set (SPEC.md "Custom fields" rule 2): the service's own
 * identifiers and the variables it generates. They are dropped without an error.
 */
export const reservedDataKeys: ReadonlySet<string> = new Set([
  "id",
  "herald_id",
  "herald_email",
  "email",
  "unsubscribeUrl",
  "subscribeUrl",
  "manageUrl",
]);

/** What one call's data does to a contact, computed once and used by every path that takes data. */
export interface DataPatch {
  /** Values to store, by key: never null and never "". */
  set: JsonObject;
  /** Keys to delete (sent as null). */
  remove: string[];
  /** Values for this call only (`{ value, persistent: false }`): never stored. */
  oneOff: JsonObject;
  /** Everything the call sent, reserved keys dropped and wrappers unwrapped: an event record's data. */
  sent: JsonObject;
}

const isPlainObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * `{ value, persistent }` and nothing else: the wrapper that says whether a value is
 * kept. Any other object is data in its own right (stored as nested data).
 */
function wrapperOf(value: JsonValue): { value: JsonValue; persistent: boolean } | undefined {
  if (!isPlainObject(value)) return undefined;
  const keys = Object.keys(value);
  if (keys.length !== 2 || !("value" in value) || typeof value.persistent !== "boolean") return undefined;
  return { value: value.value ?? null, persistent: value.persistent };
}

/**
 * The data rules of SPEC.md for one call:
 * - a string, number, boolean, array or plain object is stored under its key (plain
 *   objects as nested data, on every path); only the keys sent change;
 * - null deletes the key; an empty string is ignored (the stored value stays);
 * - `{ value, persistent: false }` is a one-off value for this call, never stored;
 *   `{ value, persistent: true }` stores `value` by the same rules;
 * - reserved keys and empty keys are dropped silently.
 */
export function patchOfData(data: JsonObject | undefined): DataPatch {
  const patch: DataPatch = { set: {}, remove: [], oneOff: {}, sent: {} };
  for (const [key, raw] of Object.entries(data ?? {})) {
    if (key === "" || reservedDataKeys.has(key) || raw === undefined) continue;
    const wrapper = wrapperOf(raw);
    const value = wrapper ? wrapper.value : raw;
    patch.sent[key] = value;
    if (wrapper && !wrapper.persistent) patch.oneOff[key] = value;
    else if (value === null) patch.remove.push(key);
    else if (value !== "") patch.set[key] = value;
  }
  return patch;
}

/** The stored data after the patch: what the database computes as `(data || set) - remove`. */
export function applyDataPatch(current: JsonObject, patch: DataPatch): JsonObject {
  const next: JsonObject = { ...current, ...patch.set };
  for (const key of patch.remove) delete next[key];
  return next;
}

/** The variables of one send or event: the contact's stored data with this call's one-off values over it. */
export const variablesOf = (stored: JsonObject, patch: DataPatch): JsonObject => ({ ...stored, ...patch.oneOff });

export const changesStoredData = (patch: DataPatch): boolean => Object.keys(patch.set).length > 0 || patch.remove.length > 0;

/**
 * Successive patches of one contact as one: what applying them in order does. A key
 * set after being removed is set, a key removed after being set is removed; the
 * result's `set` and `remove` never share a key, so their order no longer matters.
 */
export function composeDataPatches(patches: DataPatch[]): { set: JsonObject; remove: string[] } {
  const set: JsonObject = {};
  const remove = new Set<string>();
  for (const patch of patches) {
    for (const key of patch.remove) {
      delete set[key];
      remove.add(key);
    }
    for (const [key, value] of Object.entries(patch.set)) {
      set[key] = value;
      remove.delete(key);
    }
  }
  return { set, remove: [...remove] };
}
