// A thread of the stalls benchmark (stalls.ts): asks each URL every 10 ms until told to stop, then answers the
// slowest answer and the count for each. Apart from the thread that builds and posts the payloads, so that
// the bench's own work (a 56 MB JSON.stringify) does not count as a wait on the server.
import { parentPort, workerData } from "node:worker_threads";

export interface Probe {
  worstMs: number;
  count: number;
}

const urls = workerData as string[];
let stopped = false;
parentPort?.once("message", () => {
  stopped = true;
});

async function probe(url: string): Promise<Probe> {
  const result = { worstMs: 0, count: 0 };
  while (!stopped) {
    const started = performance.now();
    await (await fetch(url)).arrayBuffer();
    result.worstMs = Math.max(result.worstMs, performance.now() - started);
    result.count++;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return result;
}

parentPort?.postMessage(await Promise.all(urls.map(probe)));
