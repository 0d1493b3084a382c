import { move, transferableSymbol, valueSymbol } from "piscina";
import secureJsonParse from "secure-json-parse";

/**
 * Reading a POST /v1/send body: JSON.parse, then each attachment's base64 checked and decoded. A 56 MB body took
 * 2.7–3.2 s of the gateway's event loop on a loaded machine, in JSON.parse mostly, so that every other request
 * waited (issue 20); send-routes.ts runs this in a worker thread for large bodies. This file is also that thread's
 * entry, and so imports nothing of the gateway's own.
 */

/** The body, with the content of each attachment that the worker decoded replaced by "", and the decoded contents. */
export interface ParsedSendBody {
  body: unknown;
  /**
   * By attachment index: the content decoded, or `null` where it is not base64. Absent where the content is not a
   * string, which the route's schema then refuses.
   */
  contents: Array<Uint8Array | null | undefined>;
  /** The index of an attachment whose content is longer than the schema allows, refused before it is decoded. */
  tooLong?: number;
  /** The body's property ("" for the body itself) that nests deeper than maxSendBodyDepth. */
  tooDeep?: string;
}

/**
 * http/body-depth.ts's maxBodyDepth, which this thread's entry cannot import: checked here too because a body nested
 * 100,000 deep could not even be cloned back from the thread (structured cloning recurses), and answered 500.
 */
export const maxSendBodyDepth = 32;

/** The top-level property under which the value nests deeper than maxSendBodyDepth, walked without recursion. */
function tooDeepUnder(value: unknown): string | undefined {
  const pending: Array<{ node: unknown; top: string; depth: number }> = [{ node: value, top: "", depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { node, top, depth } = next;
    if (node === null || typeof node !== "object") continue;
    if (depth >= maxSendBodyDepth) return top;
    for (const [key, item] of Object.entries(node))
      pending.push({ node: item, top: depth === 0 && !Array.isArray(node) ? key : top, depth: depth + 1 });
  }
  return undefined;
}

/**
 * Base64 with line breaks anywhere, then up to two `=` and more line breaks, in two scans that cannot backtrack:
 * the single pattern this replaces was quadratic on a long run of newlines followed by `!` (issue 20).
 */
export function isBase64(content: string): boolean {
  if (/[^A-Za-z0-9+/=\r\n]/.test(content)) return false;
  const padding = content.indexOf("=");
  return padding < 0 || /^={1,2}[\r\n]*$/.test(content.slice(padding));
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The body as Fastify's own JSON parser reads it (secure-json-parse, refusing `__proto__` and `constructor.prototype`),
 * or undefined when it is not JSON.
 */
export function parseSendBody(bytes: Uint8Array, maxContentLength: number): ParsedSendBody | undefined {
  if (bytes.byteLength === 0) return undefined;
  let body: unknown;
  try {
    body = secureJsonParse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"), null, {
      protoAction: "error",
      constructorAction: "error",
    });
  } catch {
    return undefined;
  }
  const tooDeep = tooDeepUnder(body);
  if (tooDeep !== undefined) return { body: undefined, contents: [], tooDeep };
  const contents: ParsedSendBody["contents"] = [];
  const attachments = isRecord(body) && Array.isArray(body.attachments) ? body.attachments : [];
  for (const [index, attachment] of attachments.entries()) {
    if (!isRecord(attachment) || typeof attachment.content !== "string") continue;
    if (attachment.content.length > maxContentLength) return { body: undefined, contents: [], tooLong: index };
    const decoded = isBase64(attachment.content) ? Buffer.from(attachment.content, "base64") : null;
    // A small Buffer is a view of a shared pool: copy it, so that each content owns the memory it moves with.
    contents[index] = decoded && decoded.byteLength !== decoded.buffer.byteLength ? new Uint8Array(decoded) : decoded;
    attachment.content = "";
  }
  return { body, contents };
}

/** The worker thread's task: the body parsed, its decoded contents moved to the event loop's thread rather than copied. */
export default function parseSendBodyInThread(task: { bytes: Uint8Array; maxContentLength: number }): unknown {
  const parsed = parseSendBody(task.bytes, task.maxContentLength);
  if (!parsed) return undefined;
  const buffers = parsed.contents.flatMap((content) => (content ? [content.buffer] : []));
  return move({
    get [transferableSymbol]() {
      return buffers;
    },
    get [valueSymbol]() {
      return parsed;
    },
  });
}
