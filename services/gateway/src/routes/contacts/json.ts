import type { JsonObject } from "@bufbuild/protobuf";
import { Type } from "@fastify/type-provider-typebox";
import {
  BulkAction,
  type BulkJob,
  type Contact,
  type Event,
  FieldType,
  type ImportJob,
  type Usage,
} from "@herald/proto/herald/contacts/v1/resources_pb";
import { DateTime, iso, Nullable } from "../shared-schemas.js";

/** REST ↔ proto for the contacts service's resources; the shapes are SPEC.md's (docs/api-decisions.md for the rest). */

/** Free-form JSON: custom fields and event data. */
export const DataSchema = Type.Record(Type.String(), Type.Unknown());

/** A request's data object: it came out of JSON.parse, so every value in it is JSON. */
export const jsonDataOf = (data: Record<string, unknown> | undefined): JsonObject | undefined => data as JsonObject | undefined;

export const ContactSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  subscribed: Type.Boolean(),
  snoozedUntil: Nullable(DateTime),
  data: DataSchema,
  createdAt: Nullable(DateTime),
  updatedAt: Nullable(DateTime),
});

export const toContactJson = (contact: Contact | undefined) => ({
  id: contact?.id ?? "",
  email: contact?.email ?? "",
  subscribed: contact?.subscribed ?? false,
  snoozedUntil: iso(contact?.snoozedUntil),
  data: contact?.data ?? {},
  createdAt: iso(contact?.createdAt),
  updatedAt: iso(contact?.updatedAt),
});

export const EventSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  contactId: Type.String(),
  contactEmail: Type.String(),
  data: DataSchema,
  createdAt: Nullable(DateTime),
});

export const toEventJson = (event: Event) => ({
  id: event.id,
  name: event.name,
  contactId: event.contactId,
  contactEmail: event.contactEmail,
  data: event.data ?? {},
  createdAt: iso(event.createdAt),
});

const fieldTypeNames: Record<FieldType, string> = {
  [FieldType.UNSPECIFIED]: "string",
  [FieldType.STRING]: "string",
  [FieldType.NUMBER]: "number",
  [FieldType.BOOLEAN]: "boolean",
  [FieldType.DATE]: "date",
};
export const fieldTypeName = (type: FieldType) => fieldTypeNames[type];

export const UsageSchema = Type.Object({ id: Type.String(), name: Type.String() });

/** Usages split by the kind of thing that references the field or event. */
export const UsagesSchema = Type.Object({
  segments: Type.Array(UsageSchema),
  campaigns: Type.Array(UsageSchema),
  workflows: Type.Array(UsageSchema),
});

export const toUsagesJson = (usages: Usage[]) => {
  const of = (kind: string) => usages.filter((usage) => usage.kind === kind).map(({ id, name }) => ({ id, name }));
  return { segments: of("segment"), campaigns: of("campaign"), workflows: of("workflow") };
};

export const ImportJobSchema = Type.Object({
  jobId: Type.String(),
  status: Type.String(),
  totalRows: Type.Integer(),
  imported: Type.Integer(),
  updated: Type.Integer(),
  skipped: Type.Integer(),
  errors: Type.Array(Type.Object({ row: Type.Integer(), email: Type.String(), reason: Type.String() })),
  failureReason: Nullable(Type.String()),
  createdAt: Nullable(DateTime),
  finishedAt: Nullable(DateTime),
});

export const toImportJobJson = (job: ImportJob | undefined) => ({
  jobId: job?.jobId ?? "",
  status: job?.status ?? "",
  totalRows: Number(job?.totalRows ?? 0n),
  imported: Number(job?.imported ?? 0n),
  updated: Number(job?.updated ?? 0n),
  skipped: Number(job?.skipped ?? 0n),
  errors: (job?.errors ?? []).map((error) => ({ row: Number(error.row), email: error.email, reason: error.reason })),
  failureReason: job?.failureReason || null,
  createdAt: iso(job?.createdAt),
  finishedAt: iso(job?.finishedAt),
});

export const bulkActionNames = { subscribe: BulkAction.SUBSCRIBE, unsubscribe: BulkAction.UNSUBSCRIBE, delete: BulkAction.DELETE } as const;

export const BulkJobSchema = Type.Object({
  jobId: Type.String(),
  action: Type.String(),
  status: Type.String(),
  total: Type.Integer(),
  processed: Type.Integer(),
  progress: Type.Number(),
  succeeded: Type.Integer(),
  unchanged: Type.Integer(),
  notFound: Type.Integer(),
  createdAt: Nullable(DateTime),
  finishedAt: Nullable(DateTime),
});

export const toBulkJobJson = (job: BulkJob | undefined) => {
  const total = Number(job?.total ?? 0n);
  const processed = Number(job?.processed ?? 0n);
  const action = Object.entries(bulkActionNames).find(([, value]) => value === job?.action)?.[0] ?? "";
  return {
    jobId: job?.jobId ?? "",
    action,
    status: job?.status ?? "",
    total,
    processed,
    progress: total === 0 ? 1 : processed / total,
    succeeded: Number(job?.succeeded ?? 0n),
    unchanged: Number(job?.unchanged ?? 0n),
    notFound: Number(job?.notFound ?? 0n),
    createdAt: iso(job?.createdAt),
    finishedAt: iso(job?.finishedAt),
  };
};
