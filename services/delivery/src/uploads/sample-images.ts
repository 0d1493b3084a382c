/** One-pixel images of each accepted type, for tests here and in tests/uploads.test.ts. */
export const sampleImages = {
  png: {
    contentType: "image/png",
    data: Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64"),
  },
  jpg: {
    contentType: "image/jpeg",
    data: Buffer.from(
      "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=",
      "base64",
    ),
  },
  gif: { contentType: "image/gif", data: Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64") },
  webp: { contentType: "image/webp", data: Buffer.from("UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA", "base64") },
} as const;

/** `size` bytes that read as a PNG by their magic bytes: the sample PNG, then zeros. */
export function pngOfSize(size: number): Buffer {
  const data = Buffer.alloc(size);
  sampleImages.png.data.copy(data);
  return data;
}
