import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTransport } from "nodemailer";
import { afterEach, describe, expect, it } from "vitest";
import { type CaughtMail, type MailSink, startMailSink } from "./mail-sink.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function sink(options: { smtpPort?: number; httpPort?: number; dir?: string } = {}): Promise<MailSink> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), "herald-mail-")));
  if (!options.dir) cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const started = await startMailSink({ dir, smtpPort: options.smtpPort ?? 0, httpPort: options.httpPort ?? 0 });
  cleanups.push(() => started.stop());
  return started;
}

/** Sends as the delivery service does: nodemailer over SMTP_URL (with a login, which the sink accepts). */
async function send(smtpUrl: string, message: { to: string; subject: string; html: string }) {
  const url = new URL(smtpUrl);
  url.username = "user";
  url.password = "pass";
  const transport = createTransport(url.toString());
  try {
    return await transport.sendMail({ from: '"Example Shop" <orders@mail.example.com>', ...message });
  } finally {
    transport.close();
  }
}

const listing = async (webUrl: string) => (await (await fetch(`${webUrl}/messages.json`)).json()) as CaughtMail[];

describe("development mail sink", () => {
  it("writes each caught message as an .eml file and lists it, newest first, as HTML and raw", async () => {
    const mail = await sink();
    const first = await send(mail.smtpUrl, { to: "ada@example.org", subject: "Welcome, Ada", html: "<p>Hello <b>Ada</b></p>" });
    expect(first.response).toMatch(/^250 /);
    await send(mail.smtpUrl, { to: "grace@example.org", subject: "Order <1234> & more", html: "<p>Shipped</p><script>alert(1)</script>" });

    const files = (await readdir(mail.dir)).sort();
    expect(files).toHaveLength(2);
    expect(files.every((name) => /^\d{8}T\d{9}Z-[0-9a-f]{8}\.eml$/.test(name))).toBe(true);
    const firstRaw = await readFile(join(mail.dir, files[0] ?? ""), "utf8");
    expect(firstRaw).toContain("Subject: Welcome, Ada");
    expect(firstRaw).toContain(`Message-ID: ${first.messageId}`);

    const list = await listing(mail.webUrl);
    expect(list.map(({ subject, to, from }) => ({ subject, to, from }))).toEqual([
      { subject: "Order <1234> & more", to: "grace@example.org", from: '"Example Shop" <orders@mail.example.com>' },
      { subject: "Welcome, Ada", to: "ada@example.org", from: '"Example Shop" <orders@mail.example.com>' },
    ]);

    const page = await fetch(mail.webUrl);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain("Order &#60;1234&#62; &#38; more");
    expect(html).not.toContain("Order <1234>");
    expect(html.indexOf("Order &#60;1234")).toBeLessThan(html.indexOf("Welcome, Ada"));
    expect(html).toContain("ada@example.org");
    const older = list[1] as CaughtMail;
    expect(html).toContain(`href="/messages/${older.id}.eml"`);

    const raw = await fetch(`${mail.webUrl}/messages/${older.id}.eml`);
    expect(await raw.text()).toBe(firstRaw);
    const view = await fetch(`${mail.webUrl}/messages/${(list[0] as CaughtMail).id}.html`);
    expect(await view.text()).toContain("<p>Shipped</p>");
    // The message's own HTML runs no script.
    expect(view.headers.get("content-security-policy")).toMatch(/^sandbox;/);
  });

  it("is read-only and serves nothing outside its directory", async () => {
    const mail = await sink();
    expect((await fetch(mail.webUrl, { method: "POST" })).status).toBe(405);
    expect((await fetch(`${mail.webUrl}/messages/..%2F..%2Fetc%2Fpasswd.eml`)).status).toBe(404);
    expect((await fetch(`${mail.webUrl}/messages/20250101T000000000Z-00000000.eml`)).status).toBe(404);
    expect(await listing(mail.webUrl)).toEqual([]);
  });

  it("falls back to free ports when the wanted ones are taken, and lists what an earlier run caught", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => taken.close(resolve)));
    const busyPort = (taken.address() as { port: number }).port;

    const first = await sink({ smtpPort: busyPort, httpPort: busyPort });
    expect(first.smtpPort).not.toBe(busyPort);
    expect(first.httpPort).not.toBe(busyPort);
    await send(first.smtpUrl, { to: "ada@example.org", subject: "Kept across runs", html: "<p>hi</p>" });
    await first.stop();

    const again = await sink({ dir: first.dir });
    expect((await listing(again.webUrl)).map((mail) => mail.subject)).toEqual(["Kept across runs"]);
  });
});
