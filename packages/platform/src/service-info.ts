import { readFileSync } from "node:fs";
import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { type ServiceInfo, ServiceInfoSchema } from "@herald/proto/herald/common/v1/service_info_pb";

/** Describes this process: the version comes from the package.json above the entry module. */
export function serviceInfoOf(name: string, databaseSchema: string, entryModuleUrl: string): ServiceInfo {
  const packageJson = JSON.parse(readFileSync(new URL("../package.json", entryModuleUrl), "utf8")) as { version?: string };
  return create(ServiceInfoSchema, { name, version: packageJson.version ?? "0.0.0", startedAt: timestampNow(), databaseSchema });
}
