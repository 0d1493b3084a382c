import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { isAlive } from "./process.js";

// A holder that is alive this long is assumed to be an unrelated process that reused the pid.
const STALE_AFTER_MS = 10 * 60_000;

/**
 * Runs fn while holding an exclusive lock file, so that two terminals (or parallel test
 * workers) starting at once do not both start a server or both run Maven into one folder.
 * A lock whose holder died is taken over.
 */
export async function withFileLock<T>(file: string, fn: () => Promise<T>, timeoutMs = 5 * 60_000): Promise<T> {
  mkdirSync(dirname(file), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: "wx" });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    if (isStale(file)) {
      rmSync(file, { force: true });
      continue;
    }
    if (Date.now() >= deadline) {
      throw new Error(`timed out waiting for the lock ${file}; delete it if no other Herald process is starting servers`);
    }
    await sleep(250);
  }
  try {
    return await fn();
  } finally {
    rmSync(file, { force: true });
  }
}

function isStale(file: string): boolean {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8"), 10);
    const age = Date.now() - statSync(file).mtimeMs;
    // An unparsable pid is a holder between creating and writing the file, unless it is old.
    return age > STALE_AFTER_MS || (Number.isInteger(pid) && !isAlive(pid));
  } catch {
    return false; // released meanwhile: just retry
  }
}
