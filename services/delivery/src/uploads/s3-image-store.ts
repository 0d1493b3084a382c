import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import type { ImageStore } from "./image-store.js";

export interface S3ImageStoreOptions {
  bucket: string;
  /** An S3-compatible endpoint (MinIO, R2, …); unset: AWS S3 of the region. */
  endpoint?: string;
  region?: string;
  /** Bucket in the path rather than the host name, which most S3-compatible stores need. */
  forcePathStyle?: boolean;
  /** Prepended to every key, e.g. `herald/uploads/`, when the bucket holds other things too. */
  prefix?: string;
}

/** An S3 bucket (or a compatible store); credentials come from the standard AWS environment and profile chain. */
export function createS3ImageStore(options: S3ImageStoreOptions): ImageStore {
  const client = new S3Client({
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.region ? { region: options.region } : {}),
    forcePathStyle: options.forcePathStyle ?? false,
  });
  const Bucket = options.bucket;
  const prefix = options.prefix ?? "";
  return {
    async put(key, data, contentType) {
      await client.send(new PutObjectCommand({ Bucket, Key: `${prefix}${key}`, Body: data, ContentType: contentType }));
    },
    async get(key) {
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket, Key: `${prefix}${key}` }));
        return answer.Body ? await answer.Body.transformToByteArray() : undefined;
      } catch (error) {
        // AWS says NoSuchKey; some compatible stores only answer 404.
        const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        if ((error instanceof Error && error.name === "NoSuchKey") || status === 404) return undefined;
        throw error;
      }
    },
    async projectBytes(projectId) {
      let total = 0;
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix: `${prefix}${projectId}/`, ContinuationToken }));
        for (const object of page.Contents ?? []) total += object.Size ?? 0;
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
      return total;
    },
    async deleteProject(projectId) {
      // A listing page holds at most 1,000 keys, which is also what one DeleteObjects takes.
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix: `${prefix}${projectId}/`, ContinuationToken }));
        const keys = (page.Contents ?? []).flatMap((object) => (object.Key ? [{ Key: object.Key }] : []));
        if (keys.length > 0) await client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: keys, Quiet: true } }));
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
    },
  };
}
