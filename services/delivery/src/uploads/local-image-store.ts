import { randomUUID } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
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
    async deleteProject(projectId) {
      await rm(join(root, projectId), { recursive: true, force: true });
    },
  };
}
