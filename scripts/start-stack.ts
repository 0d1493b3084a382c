// `npm start`: infrastructure where none answers, then every service, then the gateway.
// Ctrl-C stops the services and whatever infrastructure this run started.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ensureInfrastructure } from "@herald/devinfra";

const root = fileURLToPath(new URL("..", import.meta.url));
const services = ["identity", "contacts", "delivery", "campaigns", "automation", "gateway"];

const infra = await ensureInfrastructure({ root, log: (message) => console.log(`herald: ${message}`) });
const env = {
  ...process.env,
  DATABASE_URL: infra.databaseUrl,
  REDIS_URL: infra.redisUrl,
  KAFKA_BROKERS: infra.kafkaBrokers.join(","),
};
const gatewayUrl = `http://localhost:${env.GATEWAY_PORT ?? "8080"}`;

let stopping = false;
const children = new Map<string, ChildProcess>();

async function stopAll(code: number): Promise<never> {
  stopping = true;
  const exits = [...children.values()].map(
    (child) => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", () => resolve()))),
  );
  for (const child of children.values()) child.kill("SIGTERM");
  await Promise.all(exits);
  await infra.stop();
  process.exit(code);
}

for (const name of services) {
  const child = spawn(process.execPath, [`services/${name}/dist/main.js`], { cwd: root, env, stdio: "inherit" });
  children.set(name, child);
  child.once("exit", (code, signal) => {
    if (stopping) return;
    console.error(`herald: ${name} exited (${signal ?? code}); stopping the rest`);
    void stopAll(1);
  });
}
process.once("SIGINT", () => void stopAll(0));
process.once("SIGTERM", () => void stopAll(0));

const deadline = Date.now() + 60_000;
for (;;) {
  const healthy = await fetch(`${gatewayUrl}/health`).then(
    (response) => response.ok,
    () => false,
  );
  if (healthy) break;
  if (Date.now() > deadline) {
    console.error("herald: the services did not all become healthy within 60 s");
    await stopAll(1);
  }
  await new Promise((resolve) => setTimeout(resolve, 250));
}
console.log(`\nherald: all services are up. Gateway: ${gatewayUrl}  (try: curl ${gatewayUrl}/health)  Ctrl-C stops everything.\n`);
