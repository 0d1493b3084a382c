import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";

// The two modules alone: the whole package (OpenTelemetry, Connect) takes a loaded machine many seconds to import.
const shutdown = new URL("../dist/shutdown.js", import.meta.url).href;
const logger = new URL("../dist/logger.js", import.meta.url).href;
/** Node starts slowly on a shared, loaded machine: a bound on the process, not a timing assertion. */
const timeout = 120_000;

/**
 * Runs a process that calls onShutdown as every main.ts does, with the given steps (source text), then `after`;
 * resolves with its exit code and output.
 */
function runProcess(after: string, steps = "[]"): Promise<{ code: number | null; output: string }> {
  const script = `import { onShutdown } from ${JSON.stringify(shutdown)};
    import { createLogger } from ${JSON.stringify(logger)};
    onShutdown(createLogger({ name: "shutdown-test" }), ${steps});
    ${after}`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, output }));
  });
}

/** The fatal (level 60) log lines of pino's JSON output. */
const fatalLines = (output: string) =>
  output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { level: number; msg: string; origin?: string; err?: { message: string } })
    .filter((line) => line.level === 60);

describe("onShutdown", () => {
  it(
    "runs the steps in order on SIGTERM, a group's steps together, a failed step not stopping the rest, and exits with 0",
    async () => {
      const step = (name: string, ms: number, fails = false) =>
        `async () => { console.log("${name} starts"); await new Promise((done) => setTimeout(done, ${ms})); ${fails ? `throw new Error("${name} failed");` : ""} console.log("${name} ends"); }`;
      const steps = `[${step("first", 10)}, [${step("slow", 300)}, ${step("quick", 50, true)}, ${step("middle", 150)}], ${step("last", 10)}]`;
      const { code, output } = await runProcess(
        // The interval keeps the process up for the signal, as a service's server does.
        `setInterval(() => {}, 1000); setTimeout(() => process.kill(process.pid, "SIGTERM"), 10);`,
        steps,
      );
      expect(code).toBe(0);
      expect(output.split("\n").filter((line) => / (starts|ends)$/.test(line))).toEqual([
        "first starts",
        "first ends",
        "slow starts",
        "quick starts",
        "middle starts",
        "middle ends",
        "slow ends",
        "last starts",
        "last ends",
      ]);
    },
    timeout,
  );
});

describe("exitOnUncaughtErrors (installed by onShutdown)", () => {
  it(
    "logs an uncaught exception as fatal with its error, and exits with status 1",
    async () => {
      const { code, output } = await runProcess(`setTimeout(() => { throw new Error("a bug outside any handler"); }, 10);`);
      expect(code).toBe(1);
      expect(fatalLines(output)).toEqual([
        expect.objectContaining({ origin: "uncaughtException", err: expect.objectContaining({ message: "a bug outside any handler" }) }),
      ]);
    },
    timeout,
  );

  it(
    "lets a connection PostgreSQL ended (57P01) pass as a warning: the process goes on",
    async () => {
      const { code, output } = await runProcess(`setTimeout(() => {
        const lost = Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01", severity: "FATAL" });
        process.emit("uncaughtException", lost, "uncaughtException");
        console.log("still running");
        process.exit(0);
      }, 10);`);
      expect(code).toBe(0);
      expect(output).toContain("still running");
      expect(fatalLines(output)).toEqual([]);
    },
    timeout,
  );

  it(
    "logs an unhandled rejection as fatal, and exits with status 1",
    async () => {
      const { code, output } = await runProcess(`setTimeout(() => { Promise.reject(new Error("nobody awaits this")); }, 10);`);
      expect(code).toBe(1);
      expect(fatalLines(output)).toEqual([
        expect.objectContaining({ origin: "unhandledRejection", err: expect.objectContaining({ message: "nobody awaits this" }) }),
      ]);
    },
    timeout,
  );

  it(
    "does not get in the way of a process that ends normally",
    async () => {
      const { code, output } = await runProcess(`setTimeout(() => process.exit(0), 10);`);
      expect(code).toBe(0);
      expect(fatalLines(output)).toEqual([]);
    },
    timeout,
  );
});
