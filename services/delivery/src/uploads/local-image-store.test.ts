import { randomUUID } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ImageStore } from "./image-store.js";
import { createLocalImageStore } from "./local-image-store.js";
import { sampleImages } from "./sample-images.js";

describe("the local image store", () => {
  let dir: string;
  let store: ImageStore;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "herald-uploads-"));
    store = createLocalImageStore({ dir });
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("keeps an image under its key, byte for byte, and leaves no partial file behind", async () => {
    const project = randomUUID();
    const key = `${project}/${randomUUID()}.png`;
    await store.put(key, sampleImages.png.data, "image/png");
    expect(Buffer.from((await store.get(key)) ?? [])).toEqual(sampleImages.png.data);
    expect(await readdir(join(dir, project))).toEqual([key.split("/")[1]]);
  });

  it("answers undefined for a key nothing is stored under, in a known or unknown folder", async () => {
    const project = randomUUID();
    await store.put(`${project}/${randomUUID()}.gif`, sampleImages.gif.data, "image/gif");
    expect(await store.get(`${project}/${randomUUID()}.gif`)).toBeUndefined();
    expect(await store.get(`${randomUUID()}/${randomUUID()}.gif`)).toBeUndefined();
  });

  it("refuses a key that would leave its directory", async () => {
    await expect(store.put("../escaped.png", sampleImages.png.data, "image/png")).rejects.toThrow(/outside the uploads directory/);
    await expect(store.get("../../etc/passwd")).rejects.toThrow(/outside the uploads directory/);
  });

  it("removes one project's images and no other's; a project without any is no error", async () => {
    const [doomed, kept] = [randomUUID(), randomUUID()];
    const doomedKeys = [`${doomed}/${randomUUID()}.png`, `${doomed}/${randomUUID()}.webp`];
    const keptKey = `${kept}/${randomUUID()}.png`;
    for (const key of [...doomedKeys, keptKey]) await store.put(key, sampleImages.png.data, "image/png");
    await store.deleteProject(doomed);
    for (const key of doomedKeys) expect(await store.get(key)).toBeUndefined();
    expect(await store.get(keptKey)).toBeDefined();
    await expect(store.deleteProject(randomUUID())).resolves.toBeUndefined();
  });

  it("sums the bytes of one project's images for the upload quota; a project without any has 0", async () => {
    const [project, other] = [randomUUID(), randomUUID()];
    await store.put(`${project}/${randomUUID()}.png`, sampleImages.png.data, "image/png");
    await store.put(`${project}/${randomUUID()}.gif`, sampleImages.gif.data, "image/gif");
    await store.put(`${other}/${randomUUID()}.png`, sampleImages.png.data, "image/png");
    expect(await store.projectBytes(project)).toBe(sampleImages.png.data.byteLength + sampleImages.gif.data.byteLength);
    expect(await store.projectBytes(randomUUID())).toBe(0);
  });
});
