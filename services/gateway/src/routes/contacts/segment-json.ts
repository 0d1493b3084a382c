import type { JsonObject } from "@bufbuild/protobuf";
import { Type } from "@fastify/type-provider-typebox";
import { type Segment, SegmentType } from "@herald/proto/herald/contacts/v1/segments_service_pb";
import { DateTime, iso, Nullable } from "../shared-schemas.js";
import { DataSchema } from "./json.js";

/** REST ↔ proto for segments; the shape is SPEC.md's "Segment" (docs/api-decisions.md "Segments" for the rest). */

export const SegmentTypeSchema = Type.Union([Type.Literal("DYNAMIC"), Type.Literal("STATIC")]);
export type SegmentTypeName = "DYNAMIC" | "STATIC";

/** A condition tree as JSON; its rules are the service's, which names every bad node. */
export const ConditionSchema = DataSchema;

export const SegmentSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  type: SegmentTypeSchema,
  condition: Nullable(ConditionSchema),
  trackMembership: Type.Boolean(),
  memberCount: Type.Integer(),
  projectId: Type.String(),
  createdAt: Nullable(DateTime),
  updatedAt: Nullable(DateTime),
});

export const segmentTypeOf = (name: SegmentTypeName | undefined): SegmentType =>
  name === "STATIC" ? SegmentType.STATIC : SegmentType.DYNAMIC;

export const toSegmentJson = (segment: Segment | undefined) => ({
  id: segment?.id ?? "",
  name: segment?.name ?? "",
  description: segment?.description ?? "",
  type: segment?.type === SegmentType.STATIC ? ("STATIC" as const) : ("DYNAMIC" as const),
  condition: segment?.condition ?? null,
  trackMembership: segment?.trackMembership ?? false,
  memberCount: Number(segment?.memberCount ?? 0n),
  projectId: segment?.projectId ?? "",
  createdAt: iso(segment?.createdAt),
  updatedAt: iso(segment?.updatedAt),
});

export const isConditionObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);
