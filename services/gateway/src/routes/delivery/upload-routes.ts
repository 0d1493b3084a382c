import { ConnectError } from "@connectrpc/connect";
import multipart from "@fastify/multipart";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { connectErrorToHttp, errorDetailOf } from "@herald/errors";
import type { Image } from "@herald/proto/herald/delivery/v1/uploads_service_pb";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import { HttpProblem } from "../../http/errors.js";
import { readFilePart } from "../../http/file-part.js";
import type { Upstreams } from "../../upstreams.js";

/** An uploaded image never changes under its URL: a new upload gets a new id. */
const immutable = "public, max-age=31536000, immutable";

const ImageSchema = Type.Object({
  id: Type.String(),
  url: Type.String(),
  contentType: Type.String(),
  size: Type.Integer(),
});

const payloadTooLarge = (message: string, details?: Record<string, unknown>, code = "PAYLOAD_TOO_LARGE", suggestion?: string) =>
  new HttpProblem({ statusCode: 413, code, message, ...(details ? { details } : {}), ...(suggestion ? { suggestion } : {}) });

/** The refusals that mean "too many bytes" and answer 413: the image alone, or the project's stored images with it. */
const tooLargeCodes = new Set(["PAYLOAD_TOO_LARGE", "UPLOAD_QUOTA_EXCEEDED"]);

const megabytes = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;

/**
 * Image uploads. The gateway stops reading at UPLOAD_MAX_BYTES and answers 413 itself; the
 * delivery service checks the same limit again for its other callers.
 */
export async function registerUploadRoutes(
  app: FastifyInstance,
  deps: { upstreams: Upstreams; publicUrl: string; maxBytes: number },
): Promise<void> {
  const { maxBytes } = deps;
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { uploads } = deps.upstreams;
  const base = deps.publicUrl.replace(/\/+$/, "");
  const tags = ["Uploads"];
  // The CSV import registers the multipart parser already; each route sets its own limits per request.
  if (!app.hasRequestDecorator("isMultipart")) await app.register(multipart);

  api.post(
    "/uploads/image",
    {
      config: { auth: "project" },
      schema: {
        tags,
        summary:
          "Upload a PNG, JPEG, GIF or WebP image (multipart part `file`, UPLOAD_MAX_BYTES, 5 MB by default); answers its public URL (201)",
        consumes: ["multipart/form-data"],
        response: { 201: ImageSchema },
      },
    },
    async (request, reply) => {
      const tooLarge = () =>
        payloadTooLarge(`The image is larger than ${megabytes(maxBytes)} (${maxBytes} bytes)`, { maxBytes: String(maxBytes) });
      const { data } = await readFilePart(request, { maxBytes, what: "image", tooLarge });
      let image: Image | undefined;
      try {
        image = (await uploads.uploadImage({ projectId: projectOf(request), data })).image;
      } catch (error) {
        // InvalidArgument would read as 400: a size refusal is the 413 a client and its proxies expect.
        const code = error instanceof ConnectError ? errorDetailOf(error)?.code : undefined;
        if (code && tooLargeCodes.has(code)) {
          const problem = connectErrorToHttp(error as ConnectError);
          throw payloadTooLarge(problem.message, problem.details, code, problem.suggestion);
        }
        throw error;
      }
      if (!image) throw new Error("the delivery service answered without an image");
      return reply.status(201).send({
        id: image.id,
        url: `${base}/uploads/${image.path}`,
        contentType: image.contentType,
        size: image.size,
      });
    },
  );

  api.get(
    "/uploads/:projectId/:fileName",
    {
      config: { auth: "none" },
      schema: {
        tags,
        summary: "An uploaded image, public: anyone with the URL (an email's recipient) may load it",
        params: Type.Object({ projectId: Type.String(), fileName: Type.String() }),
      },
    },
    async (request, reply) => {
      const { image, data } = await uploads.getImage({ projectId: request.params.projectId, fileName: request.params.fileName });
      if (!image) throw new Error("the delivery service answered without an image");
      // The policy is for an image opened on its own: should its bytes also parse as HTML (a polyglot), nothing in them runs or loads.
      return reply
        .header("content-type", image.contentType)
        .header("cache-control", immutable)
        .header("x-content-type-options", "nosniff")
        .header("content-security-policy", "default-src 'none'; sandbox")
        .send(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    },
  );
}
