import { create, type JsonObject } from "@bufbuild/protobuf";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { AllContactsSchema, type Audience, AudienceSchema } from "@herald/proto/herald/contacts/v1/segments_service_pb";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import { HttpProblem } from "../../http/errors.js";
import type { Upstreams } from "../../upstreams.js";
import { isConditionObject } from "./segment-json.js";

const AudienceType = Type.Union([Type.Literal("ALL"), Type.Literal("SEGMENT"), Type.Literal("FILTERED")]);

const audienceRequired = (field: string, message: string) =>
  new HttpProblem({
    statusCode: 422,
    code: "VALIDATION_ERROR",
    message: `Invalid ${field}: it ${message}`,
    errors: [{ field, message, code: "required" }],
  });

/**
 * POST /audiences/count: the subscribed contacts an audience reaches now, for an audience not
 * saved anywhere (a campaign being written, a segment's condition being built). Campaign
 * audiences and segment conditions use the same fields (docs/api-decisions.md "Audiences").
 */
export function registerAudienceRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { segments } = deps.upstreams;
  api.post(
    "/audiences/count",
    {
      config: { auth: "project" },
      schema: {
        tags: ["Segments"],
        summary: "Count the subscribed contacts of an unsaved audience: ALL, a SEGMENT by id, or FILTERED by a condition tree",
        body: Type.Object(
          {
            audienceType: AudienceType,
            segmentId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
            // Either name, as a segment (condition) or a campaign (audienceCondition) calls it.
            condition: Type.Optional(Type.Unknown()),
            audienceCondition: Type.Optional(Type.Unknown()),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ count: Type.Integer() }) },
      },
    },
    async (request) => {
      const { audienceType, segmentId } = request.body;
      const condition = request.body.condition ?? request.body.audienceCondition;
      let kind: Audience["kind"];
      if (audienceType === "SEGMENT") {
        if (!segmentId) throw audienceRequired("segmentId", "is required for a SEGMENT audience");
        kind = { case: "segmentId", value: segmentId };
      } else if (audienceType === "FILTERED") {
        if (!isConditionObject(condition))
          throw audienceRequired("condition", "is required for a FILTERED audience (an object with logic and groups)");
        kind = { case: "condition", value: condition as JsonObject };
      } else {
        kind = { case: "all", value: create(AllContactsSchema) };
      }
      const answer = await segments.countAudience({ projectId: projectOf(request), audience: create(AudienceSchema, { kind }) });
      return { count: Number(answer.count) };
    },
  );
}
