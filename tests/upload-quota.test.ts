import { beforeAll, describe, expect, inject, it } from "vitest";
import { pngOfSize, sampleImages } from "../services/delivery/src/uploads/sample-images.js";
import { type CreatedProject, createProject, restClient, signUp } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

const megabytes = (count: number) => count * 1024 * 1024;
/** The stack's UPLOAD_QUOTA_BYTES_PER_PROJECT (tests/global-setup.ts). */
const quotaBytes = megabytes(40);

async function uploadImage(key: string, data: Uint8Array) {
  const form = new FormData();
  form.append("file", new Blob([data], { type: "image/png" }), "image.png");
  const response = await fetch(`${stack.gatewayUrl}/uploads/image`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  return { status: response.status, body: (await response.json()) as { size: number } & ErrorBody };
}

/** A project's images have a quota of bytes in all (UPLOAD_QUOTA_BYTES_PER_PROJECT): a disk or bucket is not free for one tenant to fill. */
describe("the upload quota per project", () => {
  let project: CreatedProject;
  let other: CreatedProject;

  beforeAll(async () => {
    const owner = await signUp(call, "upload-quota");
    project = await createProject(call, owner.cookie, "Quota");
    other = await createProject(call, owner.cookie, "Quota, other");
  });

  it("stores images up to the quota, then answers 413 UPLOAD_QUOTA_EXCEEDED and stores nothing more", async () => {
    // Eight images of 5 MB fill the 40 MB exactly.
    for (let i = 0; i < quotaBytes / megabytes(5); i++) {
      const stored = await uploadImage(project.secretKey, pngOfSize(megabytes(5)));
      expect(stored.status).toBe(201);
    }
    const refused = await uploadImage(project.secretKey, sampleImages.png.data);
    expect(refused.status).toBe(413);
    expect(refused.body.error).toMatchObject({
      code: "UPLOAD_QUOTA_EXCEEDED",
      statusCode: 413,
      details: { quotaBytes: String(quotaBytes), storedBytes: String(quotaBytes), size: String(sampleImages.png.data.byteLength) },
    });
    // Refused again: the refusal stored nothing.
    expect((await uploadImage(project.secretKey, sampleImages.png.data)).body.error.details).toMatchObject({
      storedBytes: String(quotaBytes),
    });
    // Another project of the same owner has its own quota.
    expect((await uploadImage(other.secretKey, sampleImages.png.data)).status).toBe(201);
  }, 180_000);
});
