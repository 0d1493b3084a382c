import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { notFound } from "@herald/errors";
import type { ConditionSubjectsService } from "@herald/proto/herald/contacts/v1/condition_subjects_service_pb";
import { FieldType } from "@herald/proto/herald/contacts/v1/resources_pb";
import type { Db } from "../db/client.js";
import type { ContactRow } from "../db/contacts.js";
import { isId, requireProjectId } from "../domain/ids.js";
import { contactToProto } from "./proto-mapping.js";

/** Events a subject carries at most: a condition tests names, counts and windows, newest first. */
const maxSubjectEvents = 10_000;

const fieldTypes: Record<string, FieldType> = {
  string: FieldType.STRING,
  number: FieldType.NUMBER,
  boolean: FieldType.BOOLEAN,
  date: FieldType.DATE,
};

/**
 * One read of everything an in-memory condition needs about a contact (the automation
 * service's CONDITION steps): a handful of indexed statements in one transaction.
 */
export function createConditionSubjectsRpc(deps: { db: Db }): ServiceImpl<typeof ConditionSubjectsService> {
  const { db } = deps;
  return {
    async getConditionSubject(request) {
      requireProjectId(request.projectId);
      const { projectId, contactId } = request;
      if (!isId(contactId)) throw notFound("Contact");
      const segmentIds = request.segmentIds.filter(isId);
      const [contact, events, memberships, fields, segments] = await db.$transaction([
        db.contact.findFirst({ where: { id: contactId, projectId } }),
        db.event.findMany({
          where: { contactId, projectId, name: { in: request.eventNames } },
          select: { name: true, createdAt: true },
          orderBy: { createdAt: "desc" },
          take: maxSubjectEvents,
        }),
        db.segmentMember.findMany({ where: { contactId, projectId, segment: { type: "STATIC" } }, select: { segmentId: true } }),
        db.contactField.findMany({ where: { projectId }, select: { key: true, type: true } }),
        db.segment.findMany({ where: { projectId, id: { in: segmentIds } }, select: { id: true, type: true, condition: true } }),
      ]);
      if (!contact) throw notFound("Contact");
      return {
        contact: contactToProto(contact as ContactRow),
        events: events.map((event) => ({ name: event.name, createdAt: timestampFromDate(event.createdAt) })),
        staticSegmentIds: memberships.map((member) => member.segmentId),
        fields: fields.map((field) => ({ key: field.key, type: fieldTypes[field.type] ?? FieldType.UNSPECIFIED })),
        segments: segments.map((segment) => ({
          id: segment.id,
          type: segment.type,
          condition: (segment.condition ?? undefined) as never,
        })),
      };
    },
  };
}
