import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DomainError } from "@herald/errors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalImageStore } from "./local-image-store.js";
import { pngOfSize, sampleImages } from "./sample-images.js";
import { createUploads, type Uploads } from "./uploads.js";

const maxBytes = 1024;

async function refusal(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(error)}`);
  return error;
}

describe("image uploads", () => {
  let dir: string;
  let uploads: Uploads;
  const project = randomUUID();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "herald-uploads-"));
    uploads = createUploads({ store: createLocalImageStore({ dir }), maxBytes, quotaBytes: Number.MAX_SAFE_INTEGER });
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it.each(Object.entries(sampleImages))("keeps a %s by its content and gives it back", async (ext, sample) => {
    const image = await uploads.upload(project, sample.data);
    expect(image).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      projectId: project,
      path: `${project}/${image.id}.${ext}`,
      contentType: sample.contentType,
      size: sample.data.byteLength,
    });
    const stored = await uploads.get(project, `${image.id}.${ext}`);
    expect(stored.image).toEqual(image);
    expect(Buffer.from(stored.data)).toEqual(sample.data);
  });

  it("refuses anything but the four image types, whatever it is called: VALIDATION_ERROR naming what it found", async () => {
    const text = await refusal(uploads.upload(project, Buffer.from("just text, named logo.png")));
    expect(text).toMatchObject({ kind: "validation", code: "VALIDATION_ERROR" });
    expect(text.fieldViolations).toEqual([
      { field: "file", code: "unsupported_image_type", message: "must be a PNG, JPEG, GIF or WebP image", received: '"unknown"' },
    ]);
    const svg = await refusal(
      uploads.upload(project, Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')),
    );
    expect(svg.code).toBe("VALIDATION_ERROR");
    const pdf = await refusal(uploads.upload(project, Buffer.from("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n", "latin1")));
    expect(pdf.fieldViolations[0]?.received).toBe('"application/pdf"');
    const empty = await refusal(uploads.upload(project, Buffer.alloc(0)));
    expect(empty.fieldViolations).toEqual([{ field: "file", code: "empty", message: "is empty" }]);
  });

  it("takes an image of exactly the limit and refuses one byte more with PAYLOAD_TOO_LARGE", async () => {
    expect((await uploads.upload(project, pngOfSize(maxBytes))).size).toBe(maxBytes);
    const tooLarge = await refusal(uploads.upload(project, pngOfSize(maxBytes + 1)));
    expect(tooLarge).toMatchObject({ kind: "invalid-argument", code: "PAYLOAD_TOO_LARGE", details: { maxBytes: "1024" } });
  });

  it("refuses a project id that is not a uuid", async () => {
    expect((await refusal(uploads.upload("../other", sampleImages.png.data))).code).toBe("INVALID_PROJECT_ID");
  });

  it("answers IMAGE_NOT_FOUND for any name it did not make, and for another project's folder", async () => {
    const image = await uploads.upload(project, sampleImages.png.data);
    const names = [
      `${image.id}.jpg`,
      `${image.id}.PNG`,
      `${image.id.toUpperCase()}.png`,
      `${image.id}.png.png`,
      `${image.id}.apng`,
      image.id,
      "../../etc/passwd",
      `${randomUUID()}.png`,
    ];
    for (const name of names) expect((await refusal(uploads.get(project, name))).code).toBe("IMAGE_NOT_FOUND");
    expect((await refusal(uploads.get(randomUUID(), `${image.id}.png`))).code).toBe("IMAGE_NOT_FOUND");
    expect((await refusal(uploads.get("..", `${image.id}.png`))).code).toBe("IMAGE_NOT_FOUND");
  });

  it("forgets a deleted project's images", async () => {
    const other = randomUUID();
    const image = await uploads.upload(other, sampleImages.webp.data);
    await uploads.deleteProject(other);
    expect((await refusal(uploads.get(other, `${image.id}.webp`))).code).toBe("IMAGE_NOT_FOUND");
    expect((await uploads.get(project, `${(await uploads.upload(project, sampleImages.gif.data)).id}.gif`)).image.projectId).toBe(project);
  });
});
