import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import type { ImageStore } from "./image-store.js";

/** A directory on the local disk, one folder per project: fine for one replica or a shared volume. */
export function createLocalImageStore(options: { dir: string }): ImageStore {
  const root = resolve(options.dir);
  // Keys are checked before they get here; this guard keeps a future caller's mistake inside the directory.
  const pathOf = (key: string): string => {
    const path = resolve(root, key);
    if (!path.startsWith(root + sep)) throw new Error(`image key outside the uploads directory: ${key}`);
    return path;
  };
  return {
    async put(key, data) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      // Written beside and renamed into place, so that a concurrent read never serves half a file.
      const partial = `${path}.${randomUUID()}.partial`;
      try {
        await writeFile(partial, data, { flag: "wx" });
        await rename(partial, path);
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
    },
    async get(key) {
      try {
        return await readFile(pathOf(key));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw error;
      }
    },
    async projectBytes(projectId) {
      const folder = pathOf(projectId);
      let names: string[];
      try {
        names = await readdir(folder);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
        throw error;
      }
      let total = 0;
      // Partial files count too: they are images being written, which the quota must see.
      for (const name of names) total += (await stat(join(folder, name)).catch(() => ({ size: 0 }))).size;
      return total;
    },
    async deleteProject(projectId) {
      await rm(join(root, projectId), { recursive: true, force: true });
    },
  };
}
