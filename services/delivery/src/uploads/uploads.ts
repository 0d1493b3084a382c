import { randomUUID } from "node:crypto";
import { DomainError, validationFailed } from "@herald/errors";
import { isId, requireProjectId } from "../domain/ids.js";
import type { ImageStore } from "./image-store.js";
import { detectImageType, type ImageType, imageTypeOfExt } from "./image-type.js";

export interface StoredImage {
  id: string;
  projectId: string;
  /** `<projectId>/<id>.<ext>`: the key in the store and the public URL's path after /uploads/. */
  path: string;
  contentType: ImageType["contentType"];
  size: number;
}

export interface Uploads {
  upload(projectId: string, data: Uint8Array): Promise<StoredImage>;
  get(projectId: string, fileName: string): Promise<{ image: StoredImage; data: Uint8Array }>;
  deleteProject(projectId: string): Promise<void>;
}

const imageNotFound = () => new DomainError("not-found", "IMAGE_NOT_FOUND", "Image not found");

const megabytes = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;

const quotaExceeded = (quotaBytes: number, storedBytes: number, size: number) =>
  new DomainError(
    "invalid-argument",
    "UPLOAD_QUOTA_EXCEEDED",
    `This image (${size} bytes) would take the project's uploads past its quota of ${megabytes(quotaBytes)}: ${storedBytes} bytes are stored`,
    {
      details: { quotaBytes: String(quotaBytes), storedBytes: String(storedBytes), size: String(size) },
      suggestion: "Ask the operator of this deployment for a larger UPLOAD_QUOTA_BYTES_PER_PROJECT",
    },
  );

export function createUploads(deps: {
  store: ImageStore;
  maxBytes: number;
  /** UPLOAD_QUOTA_BYTES_PER_PROJECT: the bytes a project may keep stored in all; an upload past it is refused. */
  quotaBytes: number;
}): Uploads {
  const { store, maxBytes, quotaBytes } = deps;
  /** Each project's uploads run one at a time in this process, so that two at once cannot both pass the quota. */
  const turns = new Map<string, Promise<unknown>>();
  function inTurn<T>(projectId: string, work: () => Promise<T>): Promise<T> {
    const previous = turns.get(projectId) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    turns.set(projectId, settled);
    void settled.then(() => {
      if (turns.get(projectId) === settled) turns.delete(projectId);
    });
    return next;
  }
  const imageOf = (projectId: string, id: string, type: ImageType, size: number): StoredImage => ({
    id,
    projectId,
    path: `${projectId}/${id}.${type.ext}`,
    contentType: type.contentType,
    size,
  });
  return {
    async upload(projectId, data) {
      requireProjectId(projectId);
      if (data.byteLength > maxBytes) {
        throw new DomainError(
          "invalid-argument",
          "PAYLOAD_TOO_LARGE",
          `The image is larger than ${megabytes(maxBytes)} (${maxBytes} bytes)`,
          {
            details: { maxBytes: String(maxBytes) },
          },
        );
      }
      if (data.byteLength === 0) {
        throw validationFailed("The file is empty", [{ field: "file", code: "empty", message: "is empty" }]);
      }
      const detected = await detectImageType(data);
      if (!detected.image) {
        throw validationFailed("The file is not a PNG, JPEG, GIF or WebP image", [
          {
            field: "file",
            code: "unsupported_image_type",
            message: "must be a PNG, JPEG, GIF or WebP image",
            received: JSON.stringify(detected.found ?? "unknown"),
          },
        ]);
      }
      const image = imageOf(projectId, randomUUID(), detected.image, data.byteLength);
      return inTurn(projectId, async () => {
        const stored = await store.projectBytes(projectId);
        if (stored + data.byteLength > quotaBytes) throw quotaExceeded(quotaBytes, stored, data.byteLength);
        await store.put(image.path, data, image.contentType);
        return image;
      });
    },
    async get(projectId, fileName) {
      const [id = "", ext = "", ...rest] = fileName.split(".");
      const type = imageTypeOfExt(ext);
      // Only names this module made reach the store: no path tricks, no other project's folder.
      const canonical = isId(projectId) && isId(id) && `${projectId}/${fileName}` === `${projectId}/${fileName}`.toLowerCase();
      if (!canonical || !type || rest.length > 0) throw imageNotFound();
      const data = await store.get(`${projectId}/${id}.${type.ext}`);
      if (!data) throw imageNotFound();
      return { image: imageOf(projectId, id, type, data.byteLength), data };
    },
    async deleteProject(projectId) {
      await store.deleteProject(requireProjectId(projectId));
    },
  };
}
