import type { FastifyRequest } from "fastify";
import { HttpProblem } from "./errors.js";

export interface FilePart {
  filename: string;
  mimetype: string;
  data: Buffer;
}

/**
 * The one file of a multipart/form-data request, from its part named `file`, read whole. 400 INVALID_FILE
 * when the request is not multipart, has no such part, or its body cannot be read as multipart (no
 * boundary, a body cut short: busboy's errors carry no status); `tooLarge()` past `maxBytes`.
 */
export async function readFilePart(
  request: FastifyRequest,
  options: { maxBytes: number; what: string; tooLarge: () => HttpProblem },
): Promise<FilePart> {
  const invalid = (message: string) => new HttpProblem({ statusCode: 400, code: "INVALID_FILE", message });
  const expected = `Send the ${options.what} as multipart/form-data in a part named file`;
  if (!request.isMultipart()) throw invalid(expected);
  try {
    const file = await request.file({ limits: { fileSize: options.maxBytes, files: 1 } });
    if (file?.fieldname !== "file") throw invalid(expected);
    const data = await file.toBuffer();
    // toBuffer misses a cut made in the last chunk (a file a few bytes over): the stream still says so.
    if (file.file.truncated) throw options.tooLarge();
    return { filename: file.filename, mimetype: file.mimetype, data };
  } catch (error) {
    if (error instanceof HttpProblem) throw error;
    const failure = error as { code?: string; statusCode?: number; message?: string };
    if (failure.code === "FST_REQ_FILE_TOO_LARGE") throw options.tooLarge();
    if (failure.statusCode !== undefined && failure.statusCode >= 400 && failure.statusCode < 500) throw error;
    throw invalid(`The multipart body cannot be read: ${failure.message ?? "it is malformed"}`);
  }
}
