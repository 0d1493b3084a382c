import multipart from "@fastify/multipart";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import { HttpProblem } from "../../http/errors.js";
import { readFilePart } from "../../http/file-part.js";
import type { Upstreams } from "../../upstreams.js";
import { BulkJobSchema, bulkActionNames, ImportJobSchema, toBulkJobJson, toImportJobJson } from "./json.js";

/** SPEC.md: CSV files of at most 5 MB. */
const csvMaxBytes = 5 * 1024 * 1024;
const csvTypes = new Set(["text/csv", "application/csv", "text/plain", "application/vnd.ms-excel", "application/octet-stream"]);
const JobId = Type.Object({ jobId: Type.String({ minLength: 1 }) });

export async function registerJobRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { jobs } = deps.upstreams;
  const config = { auth: "project" } as const;
  const tags = ["Contacts"];
  await app.register(multipart, { limits: { fileSize: csvMaxBytes, files: 1, fields: 10, parts: 20 } });

  api.post(
    "/contacts/import",
    {
      config,
      schema: {
        tags,
        summary: "Import contacts from a CSV file (multipart part `file`, at most 5 MB)",
        consumes: ["multipart/form-data"],
        response: { 202: Type.Object({ jobId: Type.String(), status: Type.String() }) },
      },
    },
    async (request, reply) => {
      // Read whole before anything reaches the contacts service: 413 past the size limit.
      const file = await readFilePart(request, {
        maxBytes: csvMaxBytes,
        what: "CSV",
        tooLarge: () => new HttpProblem({ statusCode: 413, code: "PAYLOAD_TOO_LARGE", message: "The CSV is larger than 5 MB" }),
      });
      const csv = file.data;
      const looksLikeCsv = file.filename.toLowerCase().endsWith(".csv") || csvTypes.has(file.mimetype);
      if (!looksLikeCsv || csv.includes(0)) {
        throw new HttpProblem({ statusCode: 400, code: "INVALID_FILE", message: "The file is not a CSV (text/csv, UTF-8)" });
      }
      const answer = await jobs.startImport({ projectId: projectOf(request), filename: file.filename, csv });
      return reply.status(202).send({ jobId: answer.job?.jobId ?? "", status: answer.job?.status ?? "queued" });
    },
  );

  api.get(
    "/contacts/import/:jobId",
    { config, schema: { tags, summary: "An import job", params: JobId, response: { 200: ImportJobSchema } } },
    async (request) => toImportJobJson((await jobs.getImport({ projectId: projectOf(request), jobId: request.params.jobId })).job),
  );

  for (const [name, action] of Object.entries(bulkActionNames)) {
    api.post(
      `/contacts/bulk-${name}`,
      {
        config,
        schema: {
          tags,
          summary: `Queue a bulk ${name} of up to 1,000 contacts`,
          body: Type.Object({ ids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 1000 }) }),
          response: { 202: Type.Object({ jobId: Type.String(), status: Type.String() }) },
        },
      },
      async (request, reply) => {
        const answer = await jobs.startBulkJob({ projectId: projectOf(request), action, contactIds: request.body.ids });
        return reply.status(202).send({ jobId: answer.job?.jobId ?? "", status: answer.job?.status ?? "queued" });
      },
    );
  }

  api.get(
    "/contacts/bulk/:jobId",
    { config, schema: { tags, summary: "A bulk job", params: JobId, response: { 200: BulkJobSchema } } },
    async (request) => toBulkJobJson((await jobs.getBulkJob({ projectId: projectOf(request), jobId: request.params.jobId })).job),
  );
}
