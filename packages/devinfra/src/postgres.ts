import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { bareHost, redactUrl, urlHostPort } from "./config.js";
import { assertPortFree, isUnreachable } from "./network.js";
import {
  type LocalServer,
  livePid,
  type RunAs,
  runToCompletion,
  spawnDetached,
  stopFromPidFile,
  stopProcess,
  waitUntilReady,
} from "./process.js";

interface PostgresTarget {
  host: string;
  port: number;
  user: string;
  password: string | undefined;
  database: string;
  ssl: { rejectUnauthorized: boolean } | undefined;
}

function parseTarget(url: string): PostgresTarget {
  const { host, port } = urlHostPort("DATABASE_URL", url, ["postgres:", "postgresql:"], 5432);
  const parsed = new URL(url);
  // "postgres" rather than libpq's OS-user default: it is the user of the default URL.
  const user = decodeURIComponent(parsed.username) || "postgres";
  const sslmode = parsed.searchParams.get("sslmode");
  return {
    host,
    port,
    user,
    password: decodeURIComponent(parsed.password) || undefined,
    database: decodeURIComponent(parsed.pathname.slice(1)) || user,
    ssl:
      sslmode === null || ["disable", "allow", "prefer"].includes(sslmode)
        ? undefined
        : { rejectUnauthorized: sslmode.startsWith("verify") },
  };
}

/** A client of the server's `postgres` database, which exists before ours does. */
function maintenanceClient(target: PostgresTarget): pg.Client {
  const client = new pg.Client({
    host: bareHost(target.host),
    port: target.port,
    user: target.user,
    password: target.password,
    database: "postgres",
    ssl: target.ssl,
    connectionTimeoutMillis: 2_000,
  });
  client.on("error", () => {}); // failures surface through the awaited calls
  return client;
}

function sqlState(err: unknown): string | undefined {
  return err instanceof Error && "code" in err && typeof err.code === "string" ? err.code : undefined;
}

/**
 * Whether a PostgreSQL server answers at url's host and port. False while nothing listens
 * or the server is starting or shutting down (57P0x); throws when a server answers but
 * refuses us (authentication, missing role), since starting another one would not help.
 */
export async function postgresAnswers(url: string): Promise<boolean> {
  const client = maintenanceClient(parseTarget(url));
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch (err) {
    if (isUnreachable(err) || sqlState(err)?.startsWith("57P0")) return false;
    throw new Error(`PostgreSQL at ${redactUrl(url)} answered but refused: ${(err as Error).message}`, { cause: err });
  } finally {
    await client.end().catch(() => {});
  }
}

/** Creates url's database unless it exists; safe when several processes race to create it. */
export async function ensureDatabase(url: string): Promise<void> {
  const target = parseTarget(url);
  if (target.database === "postgres") return;
  const client = maintenanceClient(target);
  await client.connect();
  try {
    const existing = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [target.database]);
    if (existing.rowCount === 0) await client.query(`CREATE DATABASE "${target.database.replaceAll('"', '""')}"`);
  } catch (err) {
    // 42P04 duplicate_database, or 23505 when the other CREATE commits during ours.
    const state = sqlState(err);
    if (state !== "42P04" && state !== "23505") throw err;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * A PostgreSQL cluster under <root>/.herald/postgres, made from the machine's own server
 * binaries: initdb once (trust auth, superuser named as in the URL), then `postgres` on
 * the URL's port with its unix socket in the data folder, where it cannot collide with a
 * system server's socket in /var/run/postgresql.
 */
export function createPostgresServer(options: { root: string; url: string; log: (message: string) => void }): LocalServer {
  const target = parseTarget(options.url);
  const dir = join(options.root, ".herald", "postgres");
  const dataDir = join(dir, "data");
  const pidFile = join(dir, "postgres.pid");
  const logFile = join(dir, "postgres.log");
  // The postmaster keeps `postgres -D <dataDir> ...` as its command line.
  const markers = [dataDir];
  const waitFor = (pid: number) =>
    waitUntilReady({
      what: `PostgreSQL on port ${target.port}`,
      pid,
      timeoutMs: 60_000,
      logFiles: [logFile],
      ready: () => postgresAnswers(options.url),
    });

  /**
   * PostgreSQL's own lock files (postmaster.pid, and one per socket) outlive a killed
   * server, and PostgreSQL refuses to start while the pid in them exists, even as a
   * zombie that nothing reaps (containers, some init processes). livePid removes each
   * unless it names a live postmaster of this data folder, which we then adopt: our pid
   * file was lost, the server was not.
   */
  const adoptPostmaster = () => {
    const pid = livePid(join(dataDir, "postmaster.pid"), markers);
    if (pid !== undefined) {
      writeFileSync(pidFile, `${pid}\n`);
      return pid;
    }
    if (existsSync(dataDir)) {
      for (const name of readdirSync(dataDir).filter((entry) => /^\.s\.PGSQL\.\d+\.lock$/.test(entry))) {
        livePid(join(dataDir, name), markers);
      }
    }
    return undefined;
  };

  return {
    name: "postgres",
    async start() {
      const running = livePid(pidFile, markers) ?? adoptPostmaster();
      if (running !== undefined) {
        options.log(`postgres: waiting for the server started earlier (pid ${running})`);
        await waitFor(running);
        return false;
      }
      await assertPortFree(target.host, target.port, "PostgreSQL");
      mkdirSync(dir, { recursive: true });
      const bin = findServerBinaries(dataDir);
      const runAs = process.getuid?.() === 0 ? handToPostgresUser(options.root, dir) : undefined;
      if (!existsSync(join(dataDir, "PG_VERSION"))) {
        options.log(`postgres: creating a cluster in ${dataDir}`);
        await initdb(bin, dataDir, target.user, runAs, logFile);
      }
      options.log(`postgres: starting on ${target.host}:${target.port}`);
      const pid = await spawnDetached({
        command: join(bin, "postgres"),
        args: serverArgs(target, dataDir),
        logFile,
        pidFile,
        cwd: dir,
        runAs,
      });
      try {
        await waitFor(pid);
      } catch (err) {
        await stopProcess(pid, "SIGINT").catch(() => {});
        rmSync(pidFile, { force: true });
        throw err;
      }
      return true;
    },
    stop() {
      // SIGINT is PostgreSQL's "fast" shutdown: SIGTERM ("smart") would wait for every
      // client pool to disconnect first.
      return stopFromPidFile(pidFile, markers, "SIGINT");
    },
  };
}

function serverArgs(target: PostgresTarget, dataDir: string): string[] {
  // Unix socket paths are limited to 107 bytes; TCP is what we use anyway.
  const socketDir = join(dataDir, `.s.PGSQL.${target.port}`).length < 100 ? dataDir : "";
  return [
    ["-D", dataDir],
    ["-p", String(target.port)],
    ["-k", socketDir],
    ["-c", `listen_addresses=${bareHost(target.host)}`],
    // A development and test database: durability across an OS crash is not worth the
    // fsyncs (delete .herald/postgres if that ever happens); clients need many connections.
    ["-c", "fsync=off"],
    ["-c", "synchronous_commit=off"],
    ["-c", "full_page_writes=off"],
    ["-c", "max_connections=200"],
  ].flat();
}

async function initdb(bin: string, dataDir: string, user: string, runAs: RunAs | undefined, logFile: string) {
  // Into a scratch folder renamed at the end: an interrupted initdb leaves a folder
  // that the next initdb would refuse to use.
  const scratch = `${dataDir}.init`;
  rmSync(scratch, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true }); // no PG_VERSION: not a cluster
  await runToCompletion({
    command: join(bin, "initdb"),
    args: ["-D", scratch, "-U", user, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"],
    logFile,
    cwd: join(dataDir, ".."),
    runAs,
  });
  renameSync(scratch, dataDir);
}

/** initdb and postgres: from pg_config, else Debian's per-version folders, newest first. */
function findServerBinaries(dataDir: string): string {
  const candidates: string[] = [];
  const debian = "/usr/lib/postgresql";
  const clusterVersion = existsSync(join(dataDir, "PG_VERSION")) ? readFileSync(join(dataDir, "PG_VERSION"), "utf8").trim() : undefined;
  // An existing cluster only starts with the major version that created it.
  if (clusterVersion !== undefined) candidates.push(join(debian, clusterVersion, "bin"));
  try {
    const bindir = execFileSync("pg_config", ["--bindir"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    candidates.push(bindir.trim());
  } catch {
    // no pg_config (it ships with libpq-dev): try the folders below
  }
  if (existsSync(debian)) {
    const versions = readdirSync(debian).sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => join(debian, version, "bin")));
  }
  const found = candidates.find((bin) => existsSync(join(bin, "initdb")) && existsSync(join(bin, "postgres")));
  if (found === undefined) {
    throw new Error(
      "PostgreSQL server binaries (initdb, postgres) were not found via `pg_config --bindir` or /usr/lib/postgresql/*/bin: install PostgreSQL, or set DATABASE_URL to a running server",
    );
  }
  return found;
}

/**
 * PostgreSQL refuses to run as root, so as root we run initdb and postgres as the
 * `postgres` system user and give it the folder.
 */
function handToPostgresUser(root: string, dir: string): RunAs {
  let runAs: RunAs;
  try {
    const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
    runAs = { uid: id("-u"), gid: id("-g") };
  } catch {
    throw new Error(
      'PostgreSQL refuses to run as root and there is no "postgres" system user to run it as: create one, or set DATABASE_URL to a running server',
    );
  }
  execFileSync("chown", ["-R", `${runAs.uid}:${runAs.gid}`, dir]);
  const canWrite = () => spawnSync("test", ["-w", dir], { ...runAs, stdio: "ignore" }).status === 0;
  if (!canWrite()) {
    // Typically a 0700 folder from mkdtemp as the root: let the postgres user pass
    // through the folders Herald owns (search permission only, no listing).
    for (const folder of [root, join(root, ".herald")]) {
      const mode = statSync(folder).mode & 0o7777;
      if ((mode & 0o001) === 0) chmodSync(folder, mode | 0o001);
    }
  }
  if (!canWrite()) {
    throw new Error(
      `PostgreSQL runs as the "postgres" user here (it refuses root), and that user cannot reach ${dir}: allow it through the parent folders (chmod o+x) or use another root`,
    );
  }
  return runAs;
}
