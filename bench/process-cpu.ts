import { readdir, readFile } from "node:fs/promises";

const ticksPerSecond = 100;

/** utime + stime of a /proc stat line, in seconds. The command name (field 2) may hold spaces: the fields after its closing parenthesis are fixed. */
function cpuSecondsIn(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/** CPU seconds a process has used so far (utime + stime of /proc/<pid>/stat); undefined once it has ended. */
export async function cpuSecondsOf(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  return stat === undefined ? undefined : cpuSecondsIn(stat);
}

/** What a Node process's thread does, by the name Node and V8 give it. */
export type ThreadKind = "event loop" | "worker threads" | "V8's helpers" | "other threads";

const kindOf = (name: string): ThreadKind => {
  if (name === "MainThread" || name === "node") return "event loop";
  if (name === "WorkerThread") return "worker threads";
  return name.startsWith("V8") ? "V8's helpers" : "other threads";
};

/** CPU seconds each thread of a Node process has used so far, by thread id; empty once the process has ended. */
export async function threadCpuSecondsOf(pid: number): Promise<Map<number, { kind: ThreadKind; seconds: number }>> {
  const threads = new Map<number, { kind: ThreadKind; seconds: number }>();
  const tids = await readdir(`/proc/${pid}/task`).catch(() => []);
  await Promise.all(
    tids.map(async (tid) => {
      const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, "utf8").catch(() => undefined);
      if (stat === undefined) return;
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      threads.set(Number(tid), { kind: kindOf(name), seconds: cpuSecondsIn(stat) });
    }),
  );
  return threads;
}
