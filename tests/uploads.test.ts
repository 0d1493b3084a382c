import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { pngOfSize, sampleImages } from "../services/delivery/src/uploads/sample-images.js";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

type UploadedImage = { id: string; url: string; contentType: string; size: number };

/** POST /uploads/image as a browser's form would send it: the parts given, each a field or a file. */
async function upload(
  parts: Array<{ name: string; data: Uint8Array | string; filename?: string; type?: string }>,
  auth: { key?: string; cookie?: string; projectId?: string } = {},
) {
  const form = new FormData();
  for (const part of parts) {
    if (part.filename === undefined && typeof part.data === "string") form.append(part.name, part.data);
    else form.append(part.name, new Blob([part.data], { type: part.type ?? "application/octet-stream" }), part.filename ?? "file");
  }
  const headers: Record<string, string> = {};
  if (auth.key) headers.authorization = `Bearer ${auth.key}`;
  if (auth.cookie) {
    headers.cookie = auth.cookie;
    // A multipart change made with a session needs the dashboard's origin, as a browser sends it.
    headers.origin = new URL(stack.gatewayUrl).origin;
  }
  if (auth.projectId) headers["x-project-id"] = auth.projectId;
  const response = await fetch(`${stack.gatewayUrl}/uploads/image`, { method: "POST", headers, body: form });
  return { status: response.status, body: (await response.json()) as UploadedImage & ErrorBody };
}

const uploadFile = (key: string, data: Uint8Array, filename = "image.png", type = "image/png") =>
  upload([{ name: "file", data, filename, type }], { key });

/** The public URL as a recipient's mail client loads it: no credentials. */
async function load(url: string) {
  const response = await fetch(url);
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const megabytes = (count: number) => count * 1024 * 1024;

describe("image uploads through the REST API", () => {
  let owner: SignedInUser;
  let project: CreatedProject;
  let other: CreatedProject;
  let otherOwner: SignedInUser;
  let key: string;

  beforeAll(async () => {
    owner = await signUp(call, "uploads");
    otherOwner = await signUp(call, "uploads-other");
    project = await createProject(call, owner.cookie, "Uploads");
    other = await createProject(call, otherOwner.cookie, "Other");
    key = project.secretKey;
  });

  // Deleting the projects is also what removes their files from the stack's uploads directory.
  afterAll(async () => {
    await call("DELETE", `/users/@me/projects/${project.id}`, { cookie: owner.cookie });
    await call("DELETE", `/users/@me/projects/${other.id}`, { cookie: otherOwner.cookie });
  });

  it.each(Object.entries(sampleImages))("takes a %s and serves it back byte for byte, publicly", async (ext, sample) => {
    const created = await uploadFile(key, sample.data, `picture.${ext}`, sample.contentType);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      url: `${stack.gatewayUrl}/uploads/${project.id}/${created.body.id}.${ext}`,
      contentType: sample.contentType,
      size: sample.data.byteLength,
    });
    const served = await load(created.body.url);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe(sample.contentType);
    expect(served.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(served.headers.get("x-content-type-options")).toBe("nosniff");
    expect(served.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    expect(served.headers.get("content-length")).toBe(String(sample.data.byteLength));
    expect(served.bytes.equals(sample.data)).toBe(true);
  });

  it("goes by the content, not by the name or declared type: a GIF sent as photo.jpg is a GIF", async () => {
    const created = await uploadFile(key, sampleImages.gif.data, "photo.jpg", "image/jpeg");
    expect(created.status).toBe(201);
    expect(created.body.contentType).toBe("image/gif");
    expect(created.body.url).toMatch(/\.gif$/);
    expect((await load(created.body.url)).headers.get("content-type")).toBe("image/gif");
  });

  it("refuses a text file named .png and an SVG with 422 VALIDATION_ERROR on the file", async () => {
    const text = await uploadFile(key, Buffer.from("not an image at all\n"), "logo.png", "image/png");
    expect(text.status).toBe(422);
    expect(text.body.success).toBe(false);
    expect(text.body.error).toMatchObject({ code: "VALIDATION_ERROR", statusCode: 422, requestId: expect.any(String) });
    expect(text.body.error.errors).toEqual([
      { field: "file", code: "unsupported_image_type", message: "must be a PNG, JPEG, GIF or WebP image", received: '"unknown"' },
    ]);
    const svg = await uploadFile(key, Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), "logo.svg", "image/svg+xml");
    expect(svg.status).toBe(422);
    expect(svg.body.error.errors?.[0]?.code).toBe("unsupported_image_type");
    const empty = await uploadFile(key, Buffer.alloc(0));
    expect(empty.status).toBe(422);
    expect(empty.body.error.errors).toEqual([{ field: "file", code: "empty", message: "is empty" }]);
  });

  it("takes an image of exactly 5 MB and refuses one byte more with 413 PAYLOAD_TOO_LARGE", async () => {
    const atLimit = await uploadFile(key, pngOfSize(megabytes(5)));
    expect(atLimit.status).toBe(201);
    expect(atLimit.body.size).toBe(megabytes(5));
    expect((await load(atLimit.body.url)).bytes.byteLength).toBe(megabytes(5));

    const over = await uploadFile(key, pngOfSize(megabytes(5) + 1));
    expect(over.status).toBe(413);
    expect(over.body.error).toMatchObject({ code: "PAYLOAD_TOO_LARGE", statusCode: 413, details: { maxBytes: String(megabytes(5)) } });
    expect(over.body.error.message).toContain("5 MB");
  });

  it("stops reading at UPLOAD_MAX_BYTES in the gateway: a large upload gets the same 413 without reaching delivery", async () => {
    const huge = await uploadFile(key, pngOfSize(megabytes(20)));
    expect(huge.status).toBe(413);
    expect(huge.body.error).toMatchObject({ code: "PAYLOAD_TOO_LARGE", details: { maxBytes: String(megabytes(5)) } });
  });

  it("answers 400 INVALID_FILE without a part named file", async () => {
    const fieldOnly = await upload([{ name: "file", data: "just a field" }], { key });
    expect(fieldOnly.status).toBe(400);
    expect(fieldOnly.body.error.code).toBe("INVALID_FILE");
    const misnamed = await upload([{ name: "image", data: sampleImages.png.data, filename: "a.png", type: "image/png" }], { key });
    expect(misnamed.status).toBe(400);
    expect(misnamed.body.error.code).toBe("INVALID_FILE");
    const json = await call<ErrorBody>("POST", "/uploads/image", { key, body: { file: "a.png" } });
    expect(json.status).toBe(400);
    expect(json.body.error.code).toBe("INVALID_FILE");
  });

  it("answers 400 INVALID_FILE to a multipart body it cannot read: no boundary, or cut short", async () => {
    const cut = `--b\r\ncontent-disposition: form-data; name="file"; filename="a.png"\r\ncontent-type: image/png\r\n\r\n\x89PNG`;
    for (const [contentType, body] of [
      ["multipart/form-data", "x"],
      ["multipart/form-data; boundary=b", '{"file":"a.png"}'],
      ["multipart/form-data; boundary=b", cut],
    ] as const) {
      const answer = await call<ErrorBody>("POST", "/uploads/image", { key, rawBody: body, headers: { "content-type": contentType } });
      expect([contentType, answer.status]).toEqual([contentType, 400]);
      expect(answer.body).toMatchObject({ success: false, error: { code: "INVALID_FILE", statusCode: 400 } });
    }
  });

  it("needs a secret key: a public key or none answers 401", async () => {
    const withPublicKey = await uploadFile(project.publicKey, sampleImages.png.data);
    expect(withPublicKey.status).toBe(401);
    expect(withPublicKey.body.error.code).toBe("INVALID_API_KEY");
    const anonymous = await upload([{ name: "file", data: sampleImages.png.data, filename: "a.png", type: "image/png" }]);
    expect(anonymous.status).toBe(401);
  });

  it("takes a member's dashboard session with the project in X-Project-Id", async () => {
    const created = await upload([{ name: "file", data: sampleImages.png.data, filename: "a.png", type: "image/png" }], {
      cookie: owner.cookie,
      projectId: project.id,
    });
    expect(created.status).toBe(201);
    expect(created.body.url).toContain(`/uploads/${project.id}/`);
  });

  it("keeps each project's images under its own prefix; a name under another project, or unknown, is 404", async () => {
    const mine = await uploadFile(key, sampleImages.png.data);
    const theirs = await uploadFile(other.secretKey, sampleImages.png.data);
    expect(theirs.status).toBe(201);
    expect(theirs.body.url).toBe(`${stack.gatewayUrl}/uploads/${other.id}/${theirs.body.id}.png`);
    expect((await load(theirs.body.url)).status).toBe(200);

    const notFound = [
      `/uploads/${other.id}/${mine.body.id}.png`,
      `/uploads/${project.id}/${theirs.body.id}.png`,
      `/uploads/${project.id}/${mine.body.id}.jpg`,
      `/uploads/${project.id}/${randomUUID()}.png`,
      `/uploads/${randomUUID()}/${randomUUID()}.webp`,
      `/uploads/${project.id}/not-an-id.png`,
      `/uploads/not-a-project/${mine.body.id}.png`,
      `/uploads/${project.id}/..%2F${other.id}%2F${theirs.body.id}.png`,
    ];
    for (const path of notFound) {
      const answer = await call<ErrorBody>("GET", path);
      expect(answer.status, path).toBe(404);
      expect(answer.body.error.code, path).toBe("IMAGE_NOT_FOUND");
      expect(answer.headers.get("cache-control") ?? "", path).not.toContain("immutable");
    }
  });

  it("forgets a deleted project's images", async () => {
    const doomed = await createProject(call, owner.cookie, "Doomed");
    const created = await uploadFile(doomed.secretKey, sampleImages.webp.data);
    expect(created.status).toBe(201);
    expect((await load(created.body.url)).status).toBe(200);
    expect((await call("DELETE", `/users/@me/projects/${doomed.id}`, { cookie: owner.cookie })).status).toBe(204);
    const after = await eventually(
      () => load(created.body.url),
      (answer) => answer.status === 404,
      20_000,
    );
    expect(after.status).toBe(404);
  });
});
