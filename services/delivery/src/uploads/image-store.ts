/**
 * Where uploaded images live, by key `<projectId>/<id>.<ext>`. Keys are made and
 * checked by the uploads module; a store only keeps bytes.
 */
export interface ImageStore {
  /** Writes the image whole: a reader never sees part of it. */
  put(key: string, data: Uint8Array, contentType: string): Promise<void>;
  /** The image's bytes, or undefined when nothing is stored under the key. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** The bytes of every image the project has stored: what its upload quota counts. */
  projectBytes(projectId: string): Promise<number>;
  /** Removes every image of the project; nothing there is not an error. */
  deleteProject(projectId: string): Promise<void>;
}
