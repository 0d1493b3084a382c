import { createHash, timingSafeEqual } from "node:crypto";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { HttpProblem } from "../../http/errors.js";
import type { Upstreams } from "../../upstreams.js";

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * The deployment operator's routes, behind `Authorization: Bearer <OPERATOR_TOKEN>` (no session, no project
 * key: re-enabling a suspended project is the operator's act, not a tenant's). docs/operations.md "Reputation guard".
 */
export function registerOperatorRoutes(app: FastifyInstance, deps: { upstreams: Upstreams; operatorToken: string | undefined }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const expected = deps.operatorToken === undefined ? undefined : digest(deps.operatorToken);
  const assertOperator = (request: FastifyRequest) => {
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? "")?.[1];
    if (expected === undefined || presented === undefined || !timingSafeEqual(digest(presented), expected)) {
      throw new HttpProblem({
        statusCode: 401,
        code: "UNAUTHORIZED",
        message:
          expected === undefined
            ? "Operator routes are off: set OPERATOR_TOKEN on the gateway"
            : "Operator routes need `Authorization: Bearer <OPERATOR_TOKEN>`",
      });
    }
  };

  api.post(
    "/operator/projects/:id/reenable",
    {
      // The token first: a stranger learns nothing of the route's body rules.
      preValidation: async (request) => assertOperator(request),
      schema: {
        tags: ["Operator"],
        summary: "Re-enable a project the reputation guard suspended (the deployment operator's act)",
        params: Type.Object({ id: Type.String({ minLength: 1 }) }),
        body: Type.Optional(Type.Object({ note: Type.Optional(Type.String({ maxLength: 1000 })) }, { additionalProperties: false })),
        response: { 200: Type.Object({ success: Type.Boolean(), projectId: Type.String() }) },
      },
    },
    async (request) => {
      await deps.upstreams.projects.reenableProject({ projectId: request.params.id, note: request.body?.note ?? "" });
      return { success: true, projectId: request.params.id };
    },
  );
}
