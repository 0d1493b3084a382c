import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Supervisor, superviseProcesses } from "./supervisor.js";

/** Polls until check() holds; the machine is shared and slow, so only a generous bound. */
async function until(check: () => boolean, what: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A node process running `script`, which appends a line to `starts` each time it starts. */
const nodeProcess = (name: string, starts: string, script: string) => ({
  name,
  command: process.execPath,
  args: ["-e", `require("node:fs").appendFileSync(${JSON.stringify(starts)}, "started\\n"); ${script}`],
});

const startsIn = (file: string) => {
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
};

describe("superviseProcesses (npm start)", () => {
  let supervisor: Supervisor | undefined;
  let dir: string;
  const logs: string[] = [];
  const log = (message: string) => logs.push(message);

  afterEach(async () => {
    await supervisor?.stop();
    supervisor = undefined;
    logs.length = 0;
    rmSync(dir, { recursive: true, force: true });
  });

  const temporaryFile = (name: string) => {
    dir = mkdtempSync(join(tmpdir(), "herald-supervisor-"));
    return join(dir, name);
  };

  it("restarts a process that exits, doubling the wait up to its cap, and logs each exit", async () => {
    const starts = temporaryFile("starts");
    supervisor = superviseProcesses([nodeProcess("crasher", starts, "process.exit(3)")], {
      initialDelayMs: 50,
      maxDelayMs: 200,
      stableAfterMs: 60_000,
      stdio: "ignore",
      log,
    });
    await until(
      () => startsIn(starts) >= 5,
      () => logs.join("\n"),
    );
    const exits = logs.filter((line) => line.startsWith("crasher exited"));
    expect(exits.length).toBeGreaterThanOrEqual(4);
    expect(exits[0]).toMatch(/^crasher exited \(code 3\) after .*; restarting in 50 ms$/);
    expect(exits.slice(0, 4).map((line) => line.replace(/.*restarting in /, ""))).toEqual(["50 ms", "100 ms", "200 ms", "200 ms"]);
  });

  it("waits the initial delay again after a run that lasted stableAfterMs", async () => {
    const starts = temporaryFile("starts");
    // Exits at once on its first three runs; its fourth lasts past stableAfterMs (a quick run must stay well under it
    // even while the machine is loaded and node starts slowly), then it exits at once again.
    const script = `const runs = require("node:fs").readFileSync(${JSON.stringify(starts)}, "utf8").split("\\n").length - 1;
      setTimeout(() => process.exit(1), runs === 4 ? 6000 : 0);`;
    supervisor = superviseProcesses([nodeProcess("flaky", starts, script)], {
      initialDelayMs: 20,
      maxDelayMs: 10_000,
      stableAfterMs: 5_000,
      stdio: "ignore",
      log,
    });
    await until(
      () => logs.filter((line) => line.startsWith("flaky exited")).length >= 5,
      () => logs.join("\n"),
    );
    const delays = logs.filter((line) => line.startsWith("flaky exited")).map((line) => line.replace(/.*restarting in /, ""));
    expect(delays.slice(0, 5)).toEqual(["20 ms", "40 ms", "80 ms", "20 ms", "40 ms"]);
  });

  it("stops every process on stop() and restarts none, not even one whose restart was waiting", async () => {
    const starts = temporaryFile("starts");
    const steadyStarts = join(dir, "steady");
    supervisor = superviseProcesses(
      [nodeProcess("crasher", starts, "process.exit(1)"), nodeProcess("steady", steadyStarts, "setInterval(() => {}, 1000)")],
      { initialDelayMs: 1_000, maxDelayMs: 1_000, stdio: "ignore", log },
    );
    const count = (prefix: string) => logs.filter((line) => line.startsWith(prefix)).length;
    await until(
      () => startsIn(steadyStarts) === 1,
      () => logs.join("\n"),
    );
    // The crasher has exited and its restart waits: stop() now must cancel it.
    await until(
      () => count("crasher exited") === count("crasher restarting") + 1,
      () => logs.join("\n"),
    );
    const steady = supervisor.childOf("steady");
    expect(steady?.exitCode).toBeNull();
    const crasherStarts = startsIn(starts);
    const logged = logs.length;
    await supervisor.stop();
    expect(steady?.signalCode).toBe("SIGTERM");
    expect(supervisor.childOf("steady")).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(startsIn(starts)).toBe(crasherStarts);
    expect(startsIn(steadyStarts)).toBe(1);
    expect(logs.slice(logged)).toEqual([]);
  });
});
