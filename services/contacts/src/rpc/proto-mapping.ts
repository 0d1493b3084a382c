import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate, type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import { ContactSort, SegmentMembershipSchema, SortDirection } from "@herald/proto/herald/contacts/v1/contacts_service_pb";
import { type EventName, EventNameSchema } from "@herald/proto/herald/contacts/v1/events_service_pb";
import {
  BulkAction,
  type BulkJob,
  BulkJobSchema,
  type Contact,
  ContactSchema,
  ContactSource,
  type Event,
  EventSchema,
  FieldType,
  type ImportJob,
  ImportJobSchema,
  type Usage,
  UsageSchema,
} from "@herald/proto/herald/contacts/v1/resources_pb";
import type { SegmentMembership } from "../contacts/contact-export.js";
import type { FieldDescriptor } from "../contacts/fields.js";
import type { BulkJobRow, BulkAction as DomainBulkAction } from "../db/bulk-jobs.js";
import type { ContactRow } from "../db/contacts.js";
import type { EventNameCount, EventRow } from "../db/events.js";
import type { ImportJobRow } from "../db/import-jobs.js";
import { type ContactOrder, defaultContactOrder } from "../domain/contact-order.js";
import type { FieldType as DomainFieldType } from "../domain/field-type.js";
import type { ContactSource as DomainContactSource } from "../domain/subscription.js";
import type { Usage as DomainUsage } from "../segments/segment-usage.js";

const timestamp = (date: Date | null | undefined): Timestamp | undefined => (date ? timestampFromDate(date) : undefined);

export const contactToProto = (contact: ContactRow): Contact =>
  create(ContactSchema, {
    id: contact.id,
    email: contact.email,
    subscribed: contact.subscribed,
    snoozedUntil: timestamp(contact.snoozedUntil),
    data: contact.data,
    createdAt: timestamp(contact.createdAt),
    updatedAt: timestamp(contact.updatedAt),
  });

/** An unspecified source (an older caller) is treated as POST /contacts. */
export function sourceFromProto(source: ContactSource): DomainContactSource {
  switch (source) {
    case ContactSource.TRACK:
      return "track";
    case ContactSource.SEND:
      return "send";
    case ContactSource.IMPORT:
      return "import";
    default:
      return "api";
  }
}

/** Unknown or unset sort and direction fall back to the defaults (newest first). */
export const contactOrderFromProto = (sort: ContactSort, direction: SortDirection): ContactOrder => ({
  sort: sort === ContactSort.EMAIL ? "email" : sort === ContactSort.CREATED_AT ? "createdAt" : defaultContactOrder.sort,
  direction: direction === SortDirection.ASC ? "asc" : direction === SortDirection.DESC ? "desc" : defaultContactOrder.direction,
});

const protoFieldTypes: Record<DomainFieldType, FieldType> = {
  string: FieldType.STRING,
  number: FieldType.NUMBER,
  boolean: FieldType.BOOLEAN,
  date: FieldType.DATE,
};

export const fieldToProto = (field: FieldDescriptor) => ({
  field: field.field,
  type: protoFieldTypes[field.type],
  isCustom: field.isCustom,
  coverage: field.coverage,
});

export const jsonToValue = (value: JsonValue): Value => fromJson(ValueSchema, value);

export const usageToProto = (usage: DomainUsage): Usage => create(UsageSchema, usage);

export const eventToProto = (event: EventRow): Event =>
  create(EventSchema, {
    id: event.id,
    name: event.name,
    contactId: event.contactId,
    contactEmail: event.contactEmail,
    data: event.data,
    createdAt: timestamp(event.createdAt),
  });

export const segmentMembershipToProto = (membership: SegmentMembership) =>
  create(SegmentMembershipSchema, {
    segmentId: membership.segmentId,
    name: membership.name,
    type: membership.type,
    ...(membership.memberSince ? { memberSince: timestamp(membership.memberSince) } : {}),
  });

export const eventNameToProto = (name: EventNameCount): EventName =>
  create(EventNameSchema, { name: name.name, count: BigInt(name.count), lastSeenAt: timestamp(name.lastSeenAt) });

export const importJobToProto = (job: ImportJobRow): ImportJob =>
  create(ImportJobSchema, {
    jobId: job.id,
    status: job.status,
    totalRows: BigInt(job.totalRows),
    imported: BigInt(job.imported),
    updated: BigInt(job.updated),
    skipped: BigInt(job.skipped),
    errors: job.errors.map((error) => ({ row: BigInt(error.row), email: error.email, reason: error.reason })),
    failureReason: job.failureReason ?? "",
    createdAt: timestamp(job.createdAt),
    finishedAt: timestamp(job.finishedAt),
  });

const protoBulkActions: Record<DomainBulkAction, BulkAction> = {
  subscribe: BulkAction.SUBSCRIBE,
  unsubscribe: BulkAction.UNSUBSCRIBE,
  delete: BulkAction.DELETE,
};

export function bulkActionFromProto(action: BulkAction): DomainBulkAction | undefined {
  switch (action) {
    case BulkAction.SUBSCRIBE:
      return "subscribe";
    case BulkAction.UNSUBSCRIBE:
      return "unsubscribe";
    case BulkAction.DELETE:
      return "delete";
    default:
      return undefined;
  }
}

export const bulkJobToProto = (job: BulkJobRow): BulkJob =>
  create(BulkJobSchema, {
    jobId: job.id,
    action: protoBulkActions[job.action],
    status: job.status,
    total: BigInt(job.total),
    processed: BigInt(job.processed),
    succeeded: BigInt(job.succeeded),
    unchanged: BigInt(job.unchanged),
    notFound: BigInt(job.notFound),
    createdAt: timestamp(job.createdAt),
    finishedAt: timestamp(job.finishedAt),
  });
