// `npm start`: infrastructure where none answers, then every service, then the gateway.
// Without SMTP_URL (and not sending through SES) a development mail sink catches what is sent.
// A service that exits is started again, after a wait that doubles while it keeps exiting (superviseProcesses).
// Ctrl-C (or SIGTERM) stops the services, the mail sink and whatever infrastructure this run started.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureInfrastructure, localSecrets, type MailSink, startMailSink, superviseProcesses } from "@herald/devinfra";

const root = fileURLToPath(new URL("..", import.meta.url));
const services = ["identity", "contacts", "delivery", "campaigns", "automation", "webhooks", "gateway"];

const log = (message: string) => console.log(`herald: ${message}`);

/** A variable of the environment, unset when empty. */
const setting = (name: string): string | undefined => process.env[name]?.trim() || undefined;

/** A port from the environment: MAIL_SINK_SMTP_PORT, MAIL_SINK_WEB_PORT (0 takes any free port). */
function portOf(name: string, fallback: number): number {
  const value = setting(name) ?? String(fallback);
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`herald: ${name} must be a port number, not ${JSON.stringify(value)}`);
    process.exit(2);
  }
  return port;
}
// The services send through SMTP_URL, or through SES: only when neither is set is there mail to catch.
const wantsMailSink = setting("SMTP_URL") === undefined && setting("MAIL_PROVIDER") !== "ses";
const mailSinkPorts = wantsMailSink ? { smtp: portOf("MAIL_SINK_SMTP_PORT", 1025), web: portOf("MAIL_SINK_WEB_PORT", 8025) } : undefined;

const infra = await ensureInfrastructure({ root, log });
let mailSink: MailSink | undefined;
if (mailSinkPorts) {
  try {
    mailSink = await startMailSink({ dir: join(root, ".herald", "mail"), smtpPort: mailSinkPorts.smtp, httpPort: mailSinkPorts.web, log });
  } catch (error) {
    console.error(`herald: the development mail sink did not start: ${String(error)}`);
    await infra.stop();
    process.exit(1);
  }
}
// The secrets production requires, made once for this checkout and kept in .herald/ (a variable that is set wins).
const secrets = Object.fromEntries(Object.entries(localSecrets(root)).filter(([name]) => setting(name) === undefined));
const env = {
  ...process.env,
  ...secrets,
  DATABASE_URL: infra.databaseUrl,
  REDIS_URL: infra.redisUrl,
  KAFKA_BROKERS: infra.kafkaBrokers.join(","),
  ...(mailSink ? { SMTP_URL: mailSink.smtpUrl } : {}),
  // Account emails (verification, reset, invitation) come from here, signed with the generated SYSTEM_DKIM_PRIVATE_KEY.
  SYSTEM_EMAIL_FROM: setting("SYSTEM_EMAIL_FROM") ?? "Herald <no-reply@herald.localhost>",
};
const gatewayUrl = `http://localhost:${env.GATEWAY_PORT ?? "8080"}`;
// Every process serves Prometheus metrics on a port of its own: METRICS_PORT (9464) and the next six, in the order of `services`.
const metricsBasePort = portOf("METRICS_PORT", 9464);
const metricsPortOf = (name: string) => metricsBasePort + services.indexOf(name);

const supervisor = superviseProcesses(
  services.map((name) => ({
    name,
    command: process.execPath,
    args: [`services/${name}/dist/main.js`],
    cwd: root,
    env: { ...env, METRICS_PORT: String(metricsPortOf(name)) },
  })),
  { log },
);

let stopping: Promise<never> | undefined;
function stopAll(code: number): Promise<never> {
  stopping ??= (async () => {
    await supervisor.stop();
    await Promise.all([mailSink?.stop(), infra.stop()]);
    process.exit(code);
  })();
  return stopping;
}
process.once("SIGINT", () => void stopAll(0));
process.once("SIGTERM", () => void stopAll(0));

const deadline = Date.now() + 60_000;
for (;;) {
  const healthy = await fetch(`${gatewayUrl}/health`).then(
    (response) => response.ok,
    () => false,
  );
  if (healthy) break;
  if (Date.now() > deadline) {
    console.error("herald: the services did not all become healthy within 60 s");
    await stopAll(1);
  }
  await new Promise((resolve) => setTimeout(resolve, 250));
}
const caughtMail = mailSink ? `\nherald: caught mail: ${mailSink.webUrl} (files in .herald/mail)` : "";
const metricsPorts = services.map((name) => `${name} ${metricsPortOf(name)}`).join(", ");
console.log(
  `\nherald: all services are up. Gateway: ${gatewayUrl}  (try: curl ${gatewayUrl}/health)  Ctrl-C stops everything.${caughtMail}\nherald: Prometheus metrics at http://localhost:<port>/metrics: ${metricsPorts}\n`,
);
