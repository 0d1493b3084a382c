import { parseConfig, serviceEnvironment } from "@herald/platform";
import { z } from "zod";

export const configSchema = z.object({ ...serviceEnvironment });

export type Config = z.infer<typeof configSchema>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => parseConfig(configSchema, env);
