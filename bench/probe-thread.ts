// A thread of the stalls benchmark (stalls.ts): asks each URL once (its connection made, unmeasured) and says
// "ready", then asks each every 10 ms until told to stop, and answers the slowest answer and the count for each.
// Apart from the thread that posts the payloads, so that the bench's own work does not count as a wait on the server.
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

const ask = async (url: string) => (await fetch(url)).arrayBuffer();

async function probe(url: string): Promise<Probe> {
  const result = { worstMs: 0, count: 0 };
  while (!stopped) {
    const started = performance.now();
    await ask(url);
    result.worstMs = Math.max(result.worstMs, performance.now() - started);
    result.count++;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return result;
}

await Promise.all(urls.map(ask));
parentPort?.postMessage("ready");
parentPort?.postMessage(await Promise.all(urls.map(probe)));
