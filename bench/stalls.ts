// Issue 20's event-loop stalls: each payload at the largest size the API lets through, timed, and how long two
// requests sent meanwhile (each every 10 ms) wait at worst: GET /config, answered by the gateway (and identity), and
// the open pixel of an unknown token, answered by delivery. Goals: under 1 s, and under 100 ms.
import { type SendBenchTarget, verifiedDomain } from "./send.ts";

/** The gateway's body limit for /v1/send (services/gateway/src/routes/delivery/send-routes.ts). */
const sendBodyLimit = 56 * 1024 * 1024;
/** The renderer's longest template part (packages/rendering, maxSourceLength). */
const maxSourceLength = 500_000;

interface Probe {
  worstMs: number;
  count: number;
}

interface Probed {
  status: number;
  ms: number;
  config: Probe;
  pixel: Probe;
}

/** Asks `path` every 10 ms until `done()`; its slowest answer. */
async function probe(url: string, done: () => boolean): Promise<Probe> {
  const result = { worstMs: 0, count: 0 };
  while (!done()) {
    const started = performance.now();
    await (await fetch(url)).arrayBuffer();
    result.worstMs = Math.max(result.worstMs, performance.now() - started);
    result.count++;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return result;
}

/** Runs `work` while the gateway and delivery are probed; answers its time and the slowest probes meanwhile. */
async function whileProbing(gatewayUrl: string, work: () => Promise<number>): Promise<Probed> {
  let finished = false;
  const done = () => finished;
  const probes = Promise.all([probe(`${gatewayUrl}/config`, done), probe(`${gatewayUrl}/t/o/not-a-token`, done)]);
  const started = performance.now();
  const status = await work();
  const ms = performance.now() - started;
  finished = true;
  const [config, pixel] = await probes;
  return { status, ms, config, pixel };
}

const row = (name: string, probed: Probed) =>
  `| ${name} | ${probed.status} | ${Math.round(probed.ms)} ms | ${Math.round(probed.config.worstMs)} ms (${probed.config.count}) | ${Math.round(probed.pixel.worstMs)} ms (${probed.pixel.count}) |`;

export async function stallBenchmarks(target: SendBenchTarget): Promise<string[]> {
  const { secretKey } = await target.project();
  const domain = await verifiedDomain(target, secretKey);
  const post = async (body: Record<string, unknown>) => {
    const answer = await fetch(`${target.gatewayUrl}/v1/send`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${secretKey}` },
      body: JSON.stringify({ to: `stall-${Date.now()}@stalls.bench`, from: `hello@${domain}`, subject: "Hi", body: "<p>Hi</p>", ...body }),
    });
    await answer.arrayBuffer();
    return answer.status;
  };
  const rows: string[] = [];

  // 1. An attachment of newlines then `!` (each newline is two bytes of JSON), up to the body limit.
  const newlines = `${"\n".repeat(Math.floor((sendBodyLimit - 4096) / 2))}!`;
  rows.push(
    row(
      "attachment content: 28 MB of `\\n`, then `!` (56 MB body)",
      await whileProbing(target.gatewayUrl, () =>
        post({ attachments: [{ filename: "a.bin", content: newlines, contentType: "application/octet-stream" }] }),
      ),
    ),
  );

  // For comparison, the longest content the schema takes, valid base64 (40 MB): receiving, parsing and decoding
  // alone (delivery then refuses the 30 MB decoded with 422, past SEND_ATTACHMENTS_MAX_BYTES).
  const valid = "A".repeat(40_000_000);
  rows.push(
    row(
      "for comparison: 40 MB of valid base64",
      await whileProbing(target.gatewayUrl, () =>
        post({ attachments: [{ filename: "a.bin", content: valid, contentType: "application/octet-stream" }] }),
      ),
    ),
  );

  // 2. A sender of 1,000 characters, mostly spaces (the gateway's cap).
  rows.push(row("from: 999 spaces, then `!`", await whileProbing(target.gatewayUrl, () => post({ from: `${" ".repeat(999)}!` }))));

  // 3. A body of repeated `<a ` as long as a template part may be, tracked: timed until it arrives at the sink.
  const link = '<a href="https://example.com/x">x</a>';
  const anchors = `${link}${"<a ".repeat(Math.floor((maxSourceLength - 2 * link.length) / 3))}${link}`;
  rows.push(
    row(
      "body: 500,000 characters of `<a `, tracked (until delivered)",
      await whileProbing(target.gatewayUrl, async () => {
        const to = `anchors-${Date.now()}@stalls.bench`;
        const status = await post({ to, body: anchors });
        await target.sink.waitForMessages(1, { to, timeoutMs: 120_000 });
        return status;
      }),
    ),
  );

  // 4. A Liquid loop that runs until a limit stops it, for 50 recipients: the call's render budget ends it.
  const heavy = "{% for a in (1..100000) %}{% for b in (1..100000) %}{% endfor %}{% endfor %}";
  const recipients = Array.from({ length: 50 }, (_, index) => `render-${index}-${Date.now()}@stalls.bench`);
  rows.push(
    row("body: an endless Liquid loop, 50 recipients", await whileProbing(target.gatewayUrl, () => post({ to: recipients, body: heavy }))),
  );
  return rows;
}
