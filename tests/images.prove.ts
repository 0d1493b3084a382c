// The container image, run: every service from the one image (deploy/images/Containerfile), started with
// `buildah run --isolation chroot` on the host's network against this machine's PostgreSQL (a fresh, empty
// database that the image's `migrate` fills), Redis and Kafka, and a smoke test through the gateway.
// Slow, and needs root and buildah: not part of `npm test` (its name is no *.test.ts). deploy/images/prove.sh
// builds the image and runs this file alone with HERALD_IMAGE set (vitest.images.config.ts: no global set-up,
// so no service runs from the checkout).
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { ensureInfrastructure, type Infrastructure } from "@herald/devinfra";
import {
  freePort,
  isServing,
  repoRoot,
  type ServiceName,
  serviceNames,
  startTestDnsServer,
  startTestSmtpSink,
  type TestDnsServer,
  type TestSmtpSink,
  testDnsClient,
  urlVariableOf,
  waitUntil,
} from "@herald/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";

const image = process.env.HERALD_IMAGE;
const run = promisify(execFile);

interface Container {
  name: string;
  output(): string;
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

/** The processes below `pid`, by their parent ids in /proc, with the program each runs (argv[0]). */
async function descendantsOf(pid: number): Promise<Array<{ pid: number; command: string }>> {
  const processes: Array<{ pid: number; parent: number; command: string }> = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // "<pid> (<name>) <state> <parent> …": the name may hold spaces and parentheses.
    const close = stat.lastIndexOf(")");
    if (close < 0) continue;
    const parent = Number(stat.slice(close + 2).split(" ")[1]);
    const argv = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    processes.push({ pid: Number(entry), parent, command: argv.split("\0")[0] ?? "" });
  }
  const found: Array<{ pid: number; command: string }> = [];
  const queue = [pid];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const candidate of processes.filter((process) => process.parent === next)) {
      found.push({ pid: candidate.pid, command: candidate.command });
      queue.push(candidate.pid);
    }
  }
  return found;
}

/** One `buildah run` of the image's entrypoint with `command`, in a working container of its own. */
async function startContainer(command: string, env: Record<string, string>): Promise<Container> {
  const { stdout } = await run("buildah", ["from", "--pull-never", image as string]);
  const name = stdout.trim();
  const envArgs = Object.entries(env).flatMap(([key, value]) => ["--env", `${key}=${value}`]);
  const child = spawn(
    "buildah",
    ["run", "--isolation", "chroot", "--network", "host", ...envArgs, name, "--", "node", "/app/dist/main.js", command],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  void exited.then(() => run("buildah", ["rm", name]).catch(() => {}));
  return {
    name: command,
    output: () => output,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        // As a container runtime does, SIGTERM goes to the container's command itself: `buildah run` would
        // SIGKILL it when signalled (chroot isolation has no PID namespace, so node is visible here).
        const node = (await descendantsOf(child.pid as number)).find((process) => process.command.endsWith("/node"));
        if (node) process.kill(node.pid, "SIGTERM");
        else child.kill("SIGTERM");
      }
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

describe("the container image, run", () => {
  const databaseName = `herald_images_${randomBytes(4).toString("hex")}`;
  const containers: Container[] = [];
  let infra: Infrastructure;
  let databaseUrl: string;
  let dns: TestDnsServer;
  let sink: TestSmtpSink;
  let gatewayUrl: string;
  let migrateOutput = "";

  beforeAll(async () => {
    if (!image) throw new Error("HERALD_IMAGE must name the image to run (deploy/images/prove.sh sets it)");
    infra = await ensureInfrastructure({ root: repoRoot, log: (message) => console.log(`[infra] ${message}`) });
    databaseUrl = Object.assign(new URL(infra.databaseUrl), { pathname: `/${databaseName}` }).toString();
    const admin = new pg.Client({ connectionString: infra.databaseUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${databaseName}`);
    await admin.end();
    sink = await startTestSmtpSink();
    dns = await startTestDnsServer();
    const ports = await Promise.all([...serviceNames, "gateway"].map(() => freePort()));
    const serviceUrls = Object.fromEntries(serviceNames.map((name, index) => [name, `http://127.0.0.1:${ports[index]}`])) as Record<
      ServiceName,
      string
    >;
    const gatewayPort = ports[serviceNames.length] as number;
    gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    const env = {
      // As in production: every secret given, none generated.
      NODE_ENV: "production",
      DATABASE_URL: databaseUrl,
      REDIS_URL: infra.redisUrl,
      KAFKA_BROKERS: infra.kafkaBrokers.join(","),
      KAFKA_GROUP_PREFIX: `${databaseName}.`,
      LISTEN_HOST: "127.0.0.1",
      MIGRATE_ON_START: "false",
      PUBLIC_URL: gatewayUrl,
      GATEWAY_PORT: String(gatewayPort),
      ...Object.fromEntries(serviceNames.map((name) => [urlVariableOf(name), serviceUrls[name]])),
      JWT_SECRET: randomBytes(32).toString("base64url"),
      LINK_SIGNING_SECRET: randomBytes(32).toString("base64url"),
      DKIM_ENCRYPTION_KEY: randomBytes(32).toString("hex"),
      INTERNAL_RPC_TOKEN: randomBytes(32).toString("base64url"),
      SMTP_URL: sink.url,
      DNS_SERVERS: dns.address,
      DNS_TIMEOUT_MS: "500",
      PASSWORD_SCRYPT_LOG_N: "14",
      LOG_LEVEL: "info",
    };
    const migrate = await startContainer("migrate", env);
    expect(await migrate.exited, migrate.output()).toBe(0);
    migrateOutput = migrate.output();
    for (const name of serviceNames) containers.push(await startContainer(name, env));
    for (const [index, name] of serviceNames.entries()) {
      const container = containers[index] as Container;
      await waitUntil(() => isServing(serviceUrls[name]), { timeoutMs: 180_000, describe: () => `${name}:\n${container.output()}` });
    }
    const gateway = await startContainer("gateway", env);
    containers.push(gateway);
    await waitUntil(async () => (await fetch(`${gatewayUrl}/health`)).status === 200, {
      timeoutMs: 120_000,
      describe: () => `gateway:\n${gateway.output()}`,
    });
  }, 600_000);

  afterAll(async () => {
    await Promise.all(containers.map((container) => container.stop()));
    await sink?.stop();
    await dns?.stop();
    if (infra) {
      const admin = new pg.Client({ connectionString: infra.databaseUrl });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
      await admin.end();
      await infra.stop();
    }
  }, 120_000);

  it("is configured to run as uid 10001 with node as its exec-form entrypoint", async () => {
    const { stdout } = await run("buildah", ["inspect", "--type", "image", image as string], { maxBuffer: 16 * 1024 * 1024 });
    const { config } = (JSON.parse(stdout) as { OCIv1: { config: { User: string; Entrypoint: string[]; Cmd: string[] } } }).OCIv1;
    expect(config).toMatchObject({ User: "10001:10001", Entrypoint: ["node", "/app/dist/main.js"], Cmd: ["gateway"] });
  });

  it("migrated the empty database with its migrate command", () => {
    for (const name of serviceNames) expect(migrateOutput).toContain(`"service":"${name}"`);
  });

  it("serves a sign-up, a project, /v1/track and /v1/send into the SMTP sink through the gateway", async () => {
    const call = restClient(gatewayUrl);
    expect((await call("GET", "/livez")).status).toBe(200);
    const project: CreatedProject = await createProject(call, (await signUp(call, "image")).cookie, "Image");
    const tracked = await call("POST", "/v1/track", {
      key: project.publicKey,
      body: { event: "signed-up", email: uniqueEmail("tracked"), data: { plan: "pro" } },
    });
    expect(tracked.status, JSON.stringify(tracked.body)).toBe(200);
    const { domain } = await verifiedDomain(call, testDnsClient(dns.controlUrl), project.secretKey, "image");
    const to = uniqueEmail("rcpt");
    const sent = await call("POST", "/v1/send", {
      key: project.secretKey,
      body: { to, from: `hello@${domain}`, subject: "From the image", body: "<p>Hello from a container</p>" },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const [message] = await sink.waitForMessages(1, { to, timeoutMs: 60_000 });
    expect(message?.raw).toContain("Subject: From the image");
    expect(message?.raw).toMatch(new RegExp(`^DKIM-Signature: .*d=${domain.replaceAll(".", "\\.")}`, "ms"));
  });

  it("serves the dashboard's built page and its scripts under /app/ from the gateway", async () => {
    const index = await fetch(`${gatewayUrl}/app/`);
    const html = await index.text();
    expect(index.status, html.slice(0, 500)).toBe(200);
    expect(index.headers.get("content-type")).toMatch(/^text\/html/);
    expect(html).toContain('<div id="root"></div>');
    // Vite's output, not the source page (which names /src/main.tsx).
    const scripts = [...html.matchAll(/src="(\/app\/assets\/[^"]+\.js)"/g)].map((match) => match[1] as string);
    expect(scripts, html).not.toHaveLength(0);
    for (const script of scripts) {
      const asset = await fetch(`${gatewayUrl}${script}`);
      expect(asset.status, script).toBe(200);
      expect(asset.headers.get("content-type")).toMatch(/javascript/);
      expect((await asset.text()).length, script).toBeGreaterThan(1000);
    }
  });

  it("drains and exits 0 on SIGTERM to its node process, as PID 1 of the exec-form entrypoint gets it from a runtime", async () => {
    const gateway = containers.pop() as Container;
    expect(await gateway.stop(), gateway.output()).toBe(0);
    expect(gateway.output()).toContain("shutting down");
  });
});
