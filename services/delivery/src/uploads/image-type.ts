import { fileTypeFromBuffer } from "file-type";

export interface ImageType {
  ext: "png" | "jpg" | "gif" | "webp";
  contentType: "image/png" | "image/jpeg" | "image/gif" | "image/webp";
}

/** The image types kept, by the type file-type reads from the content. SVG is left out: it can carry script. */
const acceptedTypes: Record<string, ImageType> = {
  png: { ext: "png", contentType: "image/png" },
  // An animated PNG is a PNG to every client that does not animate it.
  apng: { ext: "png", contentType: "image/png" },
  jpg: { ext: "jpg", contentType: "image/jpeg" },
  gif: { ext: "gif", contentType: "image/gif" },
  webp: { ext: "webp", contentType: "image/webp" },
};

export const imageTypeOfExt = (ext: string): ImageType | undefined => (ext === "apng" ? undefined : acceptedTypes[ext]);

/** What the content's magic bytes say it is: an accepted image type, else the MIME type found (or undefined). */
export async function detectImageType(data: Uint8Array): Promise<{ image: ImageType } | { image?: undefined; found: string | undefined }> {
  const found = await fileTypeFromBuffer(data);
  const image = found ? acceptedTypes[found.ext] : undefined;
  return image ? { image } : { found: found?.mime };
}
