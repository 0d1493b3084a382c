import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ImageStore } from "./image-store.js";
import { createS3ImageStore } from "./s3-image-store.js";
import { sampleImages } from "./sample-images.js";

// A real S3-compatible server on loopback (s3rver, path-style requests as MinIO takes them), with the SDK's
// credentials chain given a key it accepts.
describe("the S3 image store", () => {
  let dir: string;
  let server: S3rver;
  let endpoint: string;
  const savedCredentials = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  const storeOf = (prefix: string): ImageStore =>
    createS3ImageStore({ bucket: "herald", endpoint, region: "us-east-1", forcePathStyle: true, prefix });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "herald-s3-"));
    server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory: dir, configureBuckets: [{ name: "herald" }] });
    const { port } = await server.run();
    endpoint = `http://127.0.0.1:${port}`;
    process.env.AWS_ACCESS_KEY_ID = "S3RVER";
    process.env.AWS_SECRET_ACCESS_KEY = "S3RVER";
  });
  afterAll(async () => {
    for (const [name, value] of [
      ["AWS_ACCESS_KEY_ID", savedCredentials.id],
      ["AWS_SECRET_ACCESS_KEY", savedCredentials.secret],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps an image under its prefixed key, byte for byte, and answers undefined for a key with nothing", async () => {
    const store = storeOf("herald/uploads/");
    await store.put("project-a/one.png", sampleImages.png.data, "image/png");
    expect(Buffer.from((await store.get("project-a/one.png")) ?? []).equals(sampleImages.png.data)).toBe(true);
    expect(await store.get("project-a/none.png")).toBeUndefined();
    // The prefix is part of every key: another prefix sees nothing there.
    expect(await storeOf("other/").get("project-a/one.png")).toBeUndefined();
  });

  // One listing page: s3rver 3.7's continuation tokens use DES, which Node 24's OpenSSL no longer has.
  it("removes every image of one project and none of another's; a project without any is no error", async () => {
    const store = storeOf("");
    const keys = Array.from({ length: 30 }, (_, index) => `project-b/${index}.gif`);
    await Promise.all(keys.map((key) => store.put(key, sampleImages.gif.data, "image/gif")));
    await store.put("project-c/kept.gif", sampleImages.gif.data, "image/gif");
    await store.deleteProject("project-b");
    expect(await store.get("project-b/0.gif")).toBeUndefined();
    expect(await store.get("project-b/29.gif")).toBeUndefined();
    expect(await store.get("project-c/kept.gif")).toBeDefined();
    await store.deleteProject("project-without-images");
  });

  it("sums the bytes of one project's images under the prefix, for the upload quota", async () => {
    const store = storeOf("quota/");
    await store.put("project-d/1.png", sampleImages.png.data, "image/png");
    await store.put("project-d/2.gif", sampleImages.gif.data, "image/gif");
    await store.put("project-e/3.png", sampleImages.png.data, "image/png");
    expect(await store.projectBytes("project-d")).toBe(sampleImages.png.data.byteLength + sampleImages.gif.data.byteLength);
    expect(await storeOf("other/").projectBytes("project-d")).toBe(0);
    expect(await store.projectBytes("project-without-images")).toBe(0);
  });
});
