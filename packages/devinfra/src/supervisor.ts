import { type ChildProcess, type StdioOptions, spawn } from "node:child_process";

/** One process to keep running: `command args…` with its environment. */
export interface SupervisedProcess {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface SupervisorOptions {
  /** The wait before the first restart; each restart that follows a short run doubles it. Default 1 s. */
  initialDelayMs?: number;
  /** The longest wait between restarts. Default 30 s. */
  maxDelayMs?: number;
  /** A process that ran at least this long before it exited is restarted after initialDelayMs again. Default 60 s. */
  stableAfterMs?: number;
  /** How long stop() waits for a process after SIGTERM before SIGKILL. Default 15 s (a service's own shutdown limit). */
  stopTimeoutMs?: number;
  stdio?: StdioOptions;
  log: (message: string) => void;
}

export interface Supervisor {
  /** The running child of a process, if it runs now. */
  childOf(name: string): ChildProcess | undefined;
  /** Stops every process (SIGTERM, then SIGKILL past stopTimeoutMs) and restarts none any more. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Keeps processes running as a process manager would: one that exits (crash, OOM kill, `process.exit`) is started
 * again after a wait that doubles with each quick exit, up to maxDelayMs, and goes back to initialDelayMs once a
 * run lasted stableAfterMs; each exit and restart is logged. After stop() nothing is restarted, a restart that
 * was waiting included.
 */
export function superviseProcesses(processes: SupervisedProcess[], options: SupervisorOptions): Supervisor {
  const initialDelayMs = options.initialDelayMs ?? 1_000;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const stableAfterMs = options.stableAfterMs ?? 60_000;
  const stopTimeoutMs = options.stopTimeoutMs ?? 15_000;
  const children = new Map<string, ChildProcess>();
  const pendingRestarts = new Set<NodeJS.Timeout>();
  let stopping: Promise<void> | undefined;

  function start(spec: SupervisedProcess, nextDelayMs: number): void {
    const startedAt = Date.now();
    const child = spawn(spec.command, spec.args, { cwd: spec.cwd, env: spec.env, stdio: options.stdio ?? "inherit" });
    children.set(spec.name, child);
    // A command that cannot be spawned exits too ("exit" follows "error" for a spawned one, "close" for one never started).
    child.once("error", (error) => options.log(`${spec.name} failed to start: ${error.message}`));
    child.once("close", (code, signal) => {
      if (children.get(spec.name) === child) children.delete(spec.name);
      if (stopping) return;
      const ranMs = Date.now() - startedAt;
      const delayMs = ranMs >= stableAfterMs ? initialDelayMs : nextDelayMs;
      options.log(`${spec.name} exited (${signal ?? `code ${code}`}) after ${formatMs(ranMs)}; restarting in ${formatMs(delayMs)}`);
      const timer = setTimeout(() => {
        pendingRestarts.delete(timer);
        if (stopping) return;
        options.log(`${spec.name} restarting`);
        start(spec, Math.min(delayMs * 2, maxDelayMs));
      }, delayMs);
      pendingRestarts.add(timer);
    });
  }

  for (const spec of processes) start(spec, initialDelayMs);

  return {
    childOf: (name) => children.get(name),
    stop() {
      stopping ??= (async () => {
        for (const timer of pendingRestarts) clearTimeout(timer);
        pendingRestarts.clear();
        await Promise.all([...children.values()].map((child) => stopChild(child, stopTimeoutMs)));
      })();
      return stopping;
    },
  };
}

function stopChild(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("close", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

const formatMs = (ms: number) => (ms < 1_000 ? `${ms} ms` : `${(ms / 1_000).toFixed(1)} s`);
