import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { bareHost, redactUrl, urlHostPort } from "./config.js";
import { assertPortFree, isUnreachable } from "./network.js";
import { type LocalServer, livePid, spawnDetached, stopFromPidFile, stopProcess, waitUntilReady } from "./process.js";

/** Whether Redis answers PING at url; throws when it answers with an error (e.g. auth). */
export async function redisAnswers(url: string): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1_000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null, // one attempt: the caller decides what to do next
  });
  client.on("error", () => {}); // failures surface through the awaited calls
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } catch (err) {
    if (isUnreachable(err)) return false;
    throw new Error(`Redis at ${redactUrl(url)} answered but refused: ${(err as Error).message}`, { cause: err });
  } finally {
    client.disconnect();
  }
}

/** redis-server under <root>/.herald/redis on the URL's port, without persistence: Redis only holds what may be lost. */
export function createRedisServer(options: { root: string; url: string; log: (message: string) => void }): LocalServer {
  const { host, port } = urlHostPort("REDIS_URL", options.url, ["redis:", "rediss:"], 6379);
  const password = decodeURIComponent(new URL(options.url).password);
  const dir = join(options.root, ".herald", "redis");
  const pidFile = join(dir, "redis.pid");
  const logFile = join(dir, "redis.log");
  // redis-server rewrites its command line to "redis-server <bind>:<port>"; the port is
  // left out so that `down` finds it whatever REDIS_URL says at that moment.
  const markers = ["redis-server"];
  const waitFor = (pid: number) =>
    waitUntilReady({
      what: `Redis on port ${port}`,
      pid,
      timeoutMs: 15_000,
      logFiles: [logFile],
      ready: () => redisAnswers(options.url),
    });

  return {
    name: "redis",
    async start() {
      const running = livePid(pidFile, markers);
      if (running !== undefined) {
        options.log(`redis: waiting for the server started earlier (pid ${running})`);
        await waitFor(running);
        return false;
      }
      await assertPortFree(host, port, "Redis");
      mkdirSync(dir, { recursive: true });
      options.log(`redis: starting on ${host}:${port}`);
      const bind = host === "localhost" ? ["127.0.0.1", "-::1"] : [bareHost(host)];
      const pid = await spawnDetached({
        command: "redis-server",
        args: [
          ["--port", String(port)],
          ["--bind", ...bind],
          ["--save", ""],
          ["--appendonly", "no"],
          ["--dir", dir],
          ["--daemonize", "no"],
          // Clients send the URL's password, which a server without one rejects.
          password === "" ? [] : ["--requirepass", password],
        ].flat(),
        logFile,
        pidFile,
        cwd: dir,
      }).catch((err: unknown) => {
        throw new Error(`cannot start Redis (${(err as Error).message}): install redis-server, or set REDIS_URL to a running server`, {
          cause: err,
        });
      });
      try {
        await waitFor(pid);
      } catch (err) {
        await stopProcess(pid).catch(() => {});
        rmSync(pidFile, { force: true });
        throw err;
      }
      return true;
    },
    stop() {
      return stopFromPidFile(pidFile, markers);
    },
  };
}
