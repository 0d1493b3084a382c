import { PrismaPg } from "@prisma/adapter-pg";
import { defineConfig } from "prisma/config";

// The JavaScript schema engine: the CLI's native engines cannot be downloaded on our build machines.
export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "prisma/schema.prisma",
  adapter: async () => new PrismaPg({ connectionString: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/herald" }),
});
