import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** A server this package can start in the background and find again through its pid file. */
export interface LocalServer {
  readonly name: string;
  /**
   * Starts the server and resolves once it answers. When a process from an earlier run
   * (pid file) is still alive, waits for that one instead of starting a second one.
   * Resolves true only when this call spawned the process.
   */
  start(): Promise<boolean>;
  /** Stops the process named by the pid file, whoever started it; false when none ran. */
  stop(): Promise<boolean>;
}

export interface RunAs {
  uid: number;
  gid: number;
}

export interface CommandSpec {
  command: string;
  args: string[];
  /** stdout and stderr are appended here. */
  logFile: string;
  cwd?: string;
  runAs?: RunAs;
}

/**
 * Spawns a long-lived server that outlives us: its own session and process group (so a
 * Ctrl-C in the terminal does not reach it and stop() can signal the whole group),
 * output to a log file rather than pipes we would have to keep reading, and unref()
 * so our own process can exit. The pid file lets a later run find it again.
 */
export async function spawnDetached(spec: CommandSpec & { pidFile: string }): Promise<number> {
  const child = await launch(spec, true);
  child.unref();
  const pid = child.pid ?? -1;
  writeFileSync(spec.pidFile, `${pid}\n`);
  return pid;
}

/** Runs a command to completion; on failure the error carries the end of its log. */
export async function runToCompletion(spec: CommandSpec): Promise<void> {
  const child = await launch(spec, false);
  const code = await new Promise<number | null>((resolve) => child.once("exit", (status) => resolve(status)));
  if (code !== 0) {
    throw new Error(`${spec.command} ${spec.args.join(" ")} failed (exit ${code}).${describeLogs([spec.logFile])}`);
  }
}

async function launch(spec: CommandSpec, detached: boolean) {
  mkdirSync(dirname(spec.logFile), { recursive: true });
  const out = openSync(spec.logFile, "a");
  try {
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      detached,
      stdio: ["ignore", out, out],
      uid: spec.runAs?.uid,
      gid: spec.runAs?.gid,
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", (err: NodeJS.ErrnoException) => reject(err.code === "ENOENT" ? new CommandNotFoundError(spec.command) : err));
    });
    return child;
  } finally {
    // The child holds its own copy of the descriptor.
    closeSync(out);
  }
}

export class CommandNotFoundError extends Error {
  constructor(readonly command: string) {
    super(`${command}: command not found`);
    this.name = "CommandNotFoundError";
  }
}

/** True while the process exists and is not a zombie (nothing may reap orphans in a container). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return true; // no procfs: trust kill(0)
  }
}

/**
 * The pid recorded in pidFile when that process is still alive and its command line
 * contains every marker; a pid file left by a dead process (or whose pid now belongs to
 * something else, as after a reboot) is deleted so that nobody signals a stranger.
 */
export function livePid(pidFile: string, markers: string[]): number | undefined {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(pidFile, "utf8"), 10);
  } catch {
    return undefined;
  }
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid) && commandLineIncludes(pid, markers)) return pid;
  rmSync(pidFile, { force: true });
  return undefined;
}

function commandLineIncludes(pid: number, markers: string[]): boolean {
  let commandLine: string;
  try {
    commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return !existsSync("/proc/self"); // no procfs (macOS): trust the pid file
  }
  return markers.every((marker) => commandLine.includes(marker));
}

/** Signals the process group led by pid, waits for the leader to exit, SIGKILLs after graceMs. */
export async function stopProcess(pid: number, signal: NodeJS.Signals = "SIGTERM", graceMs = 15_000): Promise<void> {
  signalGroup(pid, signal);
  if (await exited(pid, graceMs)) return;
  signalGroup(pid, "SIGKILL");
  if (!(await exited(pid, 5_000))) throw new Error(`process ${pid} is still alive after SIGKILL`);
}

/** Stops what pidFile names (see livePid) and removes the file; false when nothing ran. */
export async function stopFromPidFile(pidFile: string, markers: string[], signal?: NodeJS.Signals): Promise<boolean> {
  const pid = livePid(pidFile, markers);
  if (pid === undefined) return false;
  await stopProcess(pid, signal);
  rmSync(pidFile, { force: true });
  return true;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal); // not a group leader after all
    } catch {
      // already gone
    }
  }
}

async function exited(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
  return true;
}

export interface ReadinessWait {
  what: string;
  pid: number;
  timeoutMs: number;
  logFiles: string[];
  /** false while not ready yet; throws for errors that waiting will not fix. */
  ready: () => Promise<boolean>;
}

/** Polls ready() until it holds; fails early, with the logs, when the process dies. */
export async function waitUntilReady(wait: ReadinessWait): Promise<void> {
  const deadline = Date.now() + wait.timeoutMs;
  for (;;) {
    if (await wait.ready()) return;
    if (!isAlive(wait.pid)) throw new Error(`${wait.what} exited while starting.${describeLogs(wait.logFiles)}`);
    if (Date.now() >= deadline) {
      throw new Error(`${wait.what} did not answer within ${wait.timeoutMs / 1000} s.${describeLogs(wait.logFiles)}`);
    }
    await sleep(250);
  }
}

/** The last lines of each existing log file, formatted to be appended to an error message. */
export function describeLogs(files: string[], lines = 25): string {
  return files
    .filter((file) => existsSync(file))
    .map((file) => `\n--- last lines of ${file} ---\n${tail(file, lines)}`)
    .join("");
}

function tail(file: string, lines: number): string {
  const size = statSync(file).size;
  const length = Math.min(size, 64 * 1024);
  const buffer = Buffer.alloc(length);
  const fd = openSync(file, "r");
  try {
    readSync(fd, buffer, 0, length, size - length);
  } finally {
    closeSync(fd);
  }
  // Java stack frames would push the actual error out of the tail.
  const isStackFrame = (line: string) => /^\s+at |^\s*\.\.\. \d+ more$/.test(line);
  return buffer
    .toString("utf8")
    .trimEnd()
    .split("\n")
    .filter((line) => !isStackFrame(line))
    .slice(-lines)
    .join("\n");
}
