import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";

/**
 * Ports below Linux's ephemeral range (32768–60999 by default): a port the kernel hands out (`listen(0)`) is one it
 * also gives outgoing connections, so between the moment it is picked and the moment a service listens on it, one of
 * the stack's own connections to PostgreSQL, Redis or Kafka could take it (EADDRINUSE at start, seen once in a run).
 */
const quietPorts = { from: 20_000, to: 32_000 };

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * Ports this process handed out: a stack starts its services at once, and a port picked for one is still free (its
 * service is not listening yet) when the next is picked, so it must not be picked twice.
 */
const handedOut = new Set<number>();

/** A port that was free a moment ago, outside the range of outgoing connections; good enough for processes started by tests. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = quietPorts.from + Math.floor(Math.random() * (quietPorts.to - quietPorts.from));
    if (!handedOut.has(port) && (await isFree(port))) {
      handedOut.add(port);
      return port;
    }
  }
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

export interface ServiceProcess {
  readonly name: string;
  /** The operating system's id of the process (undefined if it could not be spawned). */
  readonly pid: number | undefined;
  readonly output: () => string;
  /**
   * The lines it logged at error or fatal level (pino's 50 and 60), the last 50 of them: kept apart from output(), which
   * holds only the last 20,000 characters, so that a run can say at its end what went wrong in a long-lived process.
   */
  readonly errors: () => string[];
  /** Resolves with the exit code once the process has ended. */
  readonly exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Services spawned by this process so far. */
let spawned = 0;

/**
 * Runs a built service (`node <entry>`) with the given environment, capturing its output.
 * With HERALD_CPU_PROFILE_DIR set, each service writes a V8 CPU profile of its main thread there when it stops, as `<name>.<n>.cpuprofile`.
 */
export function spawnService(options: { name: string; entry: string; env: NodeJS.ProcessEnv }): ServiceProcess {
  const profileDir = process.env.HERALD_CPU_PROFILE_DIR;
  // Numbered in the order started, so that a replica's or a restarted process's profile does not overwrite another's.
  spawned += 1;
  const profile = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${options.name}.${spawned}.cpuprofile`] : [];
  const child: ChildProcess = spawn(process.execPath, [...profile, options.entry], {
    env: { ...process.env, LOG_LEVEL: "warn", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let partialLine = "";
  const errors: string[] = [];
  const keep = (chunk: Buffer) => {
    const text = chunk.toString();
    output = (output + text).slice(-20_000);
    const lines = (partialLine + text).split("\n");
    partialLine = lines.pop() ?? "";
    for (const line of lines) if (/"level":(50|60)\b/.test(line)) errors.push(line.slice(0, 2_000));
    errors.splice(0, errors.length - 50);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    name: options.name,
    pid: child.pid,
    output: () => output,
    errors: () => [...errors],
    exited,
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      // Longer than a process's own shutdown budget (onShutdown's 15 s), so that its own timer, not this one, ends a slow stop.
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Polls until check() resolves true, or fails with what the process printed. */
export async function waitUntil(
  check: () => Promise<boolean>,
  options: { timeoutMs?: number; describe?: () => string } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting${options.describe ? `:\n${options.describe()}` : ""}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
