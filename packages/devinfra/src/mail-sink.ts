import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Server } from "node:net";
import { join } from "node:path";
import { type AddressObject, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface MailSinkOptions {
  /** Where each caught message is written as `<time>-<random>.eml`; created when missing. */
  dir: string;
  /** The SMTP port wanted (default 1025); a busy one falls back to a free port. 0: any free port. */
  smtpPort?: number;
  /** The port of the web page wanted (default 8025); a busy one falls back to a free port. 0: any free port. */
  httpPort?: number;
  log?: (message: string) => void;
}

export interface MailSink {
  smtpPort: number;
  httpPort: number;
  /** `smtp://127.0.0.1:<port>`, as SMTP_URL takes it. */
  smtpUrl: string;
  /** The page that lists caught mail. */
  webUrl: string;
  dir: string;
  stop(): Promise<void>;
}

/** One caught message as the page lists it. */
export interface CaughtMail {
  /** The file name without `.eml`. */
  id: string;
  receivedAt: string;
  from: string;
  to: string;
  subject: string;
}

const host = "127.0.0.1";
const emlName = /^(\d{8}T\d{9}Z-[0-9a-f]{8})\.eml$/;

/** `20250102T030405678Z-1a2b3c4d`: sorts by arrival, unique within a millisecond. */
function newMailId(now: Date): string {
  return `${now.toISOString().replaceAll(/[-:.]/g, "")}-${randomBytes(4).toString("hex")}`;
}

const addressesOf = (value: AddressObject | AddressObject[] | undefined): string =>
  (Array.isArray(value) ? value : value ? [value] : []).map((address) => address.text).join(", ");

const escapeHtml = (text: string): string => text.replaceAll(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/** Listens on the wanted port, or on any free one when it is taken; resolves to the port. */
async function listenWithFallback(server: Server, port: number, what: string, log: (message: string) => void): Promise<number> {
  const listen = (wanted: number) =>
    new Promise<number>((resolve, reject) => {
      const onError = (error: Error) => reject(error);
      server.once("error", onError);
      server.listen(wanted, host, () => {
        server.off("error", onError);
        resolve((server.address() as AddressInfo).port);
      });
    });
  try {
    return await listen(port);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    const free = await listen(0);
    log(`mail sink: ${what} port ${port} is in use, using ${free}`);
    return free;
  }
}

/**
 * The development mail sink of `npm start`: an SMTP server on 127.0.0.1 that accepts every message
 * (any or no AUTH, no TLS), writes it unchanged to `<dir>/<time>-<random>.eml`, and a read-only web
 * page listing the caught messages, newest first, each viewable as its HTML part or raw `.eml`.
 */
export async function startMailSink(options: MailSinkOptions): Promise<MailSink> {
  const log = options.log ?? (() => {});
  const dir = options.dir;
  await mkdir(dir, { recursive: true });

  // Never two messages in one millisecond: file names keep the order of arrival.
  let lastMs = 0;
  async function keep(raw: Buffer): Promise<string> {
    lastMs = Math.max(Date.now(), lastMs + 1);
    const id = newMailId(new Date(lastMs));
    // Written under another name first, so that the page never lists half a message.
    const partial = join(dir, `.${id}.partial`);
    await writeFile(partial, raw);
    await rename(partial, join(dir, `${id}.eml`));
    return id;
  }

  const smtp = new SMTPServer({
    logger: false,
    // Plain text only: the services would meet a self-signed certificate.
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    allowInsecureAuth: true,
    disableReverseLookup: true,
    size: 50 * 1024 * 1024,
    // Ctrl-C should not wait 30 s for a client that keeps its connection open.
    closeTimeout: 2_000,
    onAuth(_auth, _session, callback) {
      callback(null, { user: "dev" });
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("error", (error: Error) => callback(error));
      stream.on("end", () => {
        if (stream.sizeExceeded) {
          callback(Object.assign(new Error("5.3.4 message too big for the development mail sink"), { responseCode: 552 }));
          return;
        }
        keep(Buffer.concat(chunks)).then(
          (id) => callback(null, `2.0.0 Ok: caught as ${id}`),
          (error: unknown) => callback(Object.assign(new Error(`4.3.0 ${String(error)}`), { responseCode: 451 })),
        );
      });
    },
  });
  smtp.on("error", (error) => log(`mail sink: ${error.message}`));

  // Parsed summaries by file name: a caught message never changes.
  const summaries = new Map<string, CaughtMail>();
  async function caughtMail(): Promise<CaughtMail[]> {
    const names = (await readdir(dir)).filter((name) => emlName.test(name));
    const list = await Promise.all(
      names.map(async (name) => {
        const known = summaries.get(name);
        if (known) return known;
        const file = join(dir, name);
        const [raw, info] = await Promise.all([readFile(file), stat(file)]);
        const parsed = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
        const summary: CaughtMail = {
          id: name.slice(0, -".eml".length),
          receivedAt: info.mtime.toISOString(),
          from: addressesOf(parsed.from),
          to: addressesOf(parsed.to),
          subject: parsed.subject ?? "",
        };
        summaries.set(name, summary);
        return summary;
      }),
    );
    return list.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  }

  function listingPage(list: CaughtMail[]): string {
    const rows = list
      .map(
        (mail) =>
          `<tr><td>${escapeHtml(mail.receivedAt.replace("T", " ").slice(0, 19))}</td><td>${escapeHtml(mail.from)}</td>` +
          `<td>${escapeHtml(mail.to)}</td><td><a href="/messages/${mail.id}.html">${escapeHtml(mail.subject || "(no subject)")}</a></td>` +
          `<td><a href="/messages/${mail.id}.eml">.eml</a></td></tr>`,
      )
      .join("\n");
    return `<!doctype html>
<html><head><meta charset="utf-8"><title>Herald: caught mail</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:.3em .8em;border-bottom:1px solid #ddd;text-align:left}</style>
</head><body><h1>Caught mail</h1>
<p>${list.length} message(s) in <code>${escapeHtml(dir)}</code>, newest first (UTC). Reload to see new mail.</p>
<table><thead><tr><th>time</th><th>from</th><th>to</th><th>subject</th><th>raw</th></tr></thead>
<tbody>
${rows}
</tbody></table></body></html>
`;
  }

  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    const path = new URL(request.url ?? "/", "http://sink").pathname;
    if (path === "/") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(listingPage(await caughtMail()));
      return;
    }
    if (path === "/messages.json") {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(await caughtMail()));
      return;
    }
    const match = /^\/messages\/(\d{8}T\d{9}Z-[0-9a-f]{8})\.(eml|html)$/.exec(path);
    const raw = match ? await readFile(join(dir, `${match[1]}.eml`)).catch(() => undefined) : undefined;
    if (!match || !raw) {
      response.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found\n");
      return;
    }
    if (match[2] === "eml") {
      response.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end(raw);
      return;
    }
    const parsed = await simpleParser(raw);
    const html = typeof parsed.html === "string" ? parsed.html : `<pre>${escapeHtml(parsed.text ?? "")}</pre>`;
    // The message's own HTML, with no script and no request to anywhere but images: it is mail, not a page of ours.
    response
      .writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": "sandbox; default-src 'none'; img-src * data:; style-src 'unsafe-inline'",
      })
      .end(html);
  }

  const web = createHttpServer((request, response) => {
    answer(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
      response.end(`${String(error)}\n`);
    });
  });

  let smtpPort: number;
  let httpPort: number;
  try {
    smtpPort = await listenWithFallback(smtp.server, options.smtpPort ?? 1025, "SMTP", log);
    httpPort = await listenWithFallback(web, options.httpPort ?? 8025, "web", log);
  } catch (error) {
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    throw error;
  }
  let stopping: Promise<void> | undefined;
  return {
    smtpPort,
    httpPort,
    smtpUrl: `smtp://${host}:${smtpPort}`,
    webUrl: `http://${host}:${httpPort}`,
    dir,
    stop: () => {
      stopping ??= Promise.all([
        new Promise<void>((resolve) => smtp.close(() => resolve())),
        new Promise<void>((resolve) => {
          web.close(() => resolve());
          web.closeAllConnections();
        }),
      ]).then(() => undefined);
      return stopping;
    },
  };
}
