import { Resolver } from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from "request-filtering-agent";

/** The address (or scheme) of a call is not allowed: private, loopback, link-local, metadata. */
export class OutboundRefused extends Error {
  override readonly name = "OutboundRefused";
}

/** The call's signal ended it (its deadline, or its caller's) before the answer was complete. */
export class OutboundAborted extends Error {
  override readonly name = "OutboundAborted";
  constructor() {
    super("the call was aborted before its answer was complete");
  }
}

export interface OutboundResponse {
  status: number;
  /** The body's first `maxBodyBytes` (the rest is never read); empty for a redirect. */
  body: string;
  /** A 3xx answer's Location, which the caller may follow (through the same guard) or not. */
  location?: string;
}

export interface OutboundRequest {
  method: string;
  headers: Record<string, string>;
  body?: string | undefined;
  /** Ends the call whatever state it is in: one deadline over the whole call (AbortSignal.timeout), or the caller's own. */
  signal: AbortSignal;
  /** How much of the answer's body is read. */
  maxBodyBytes: number;
}

export interface OutboundCaller {
  send(url: URL, request: OutboundRequest): Promise<OutboundResponse>;
}

/** A DNS lookup through the given resolvers (DNS_SERVERS), A records first, then AAAA. */
function lookupThrough(servers: readonly string[]): LookupFunction | undefined {
  if (servers.length === 0) return undefined;
  const resolver = new Resolver({ timeout: 2_000, tries: 2 });
  resolver.setServers(servers);
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    const answer = (addresses: string[], family: 4 | 6) =>
      options.all
        ? callback(
            null,
            addresses.map((address) => ({ address, family })),
          )
        : callback(null, addresses[0], family);
    resolver.resolve4(hostname, (error4, v4) => {
      if (!error4 && v4.length > 0) return answer(v4, 4);
      resolver.resolve6(hostname, (error6, v6) => {
        if (!error6 && v6.length > 0) return answer(v6, 6);
        callback(error4 ?? error6 ?? new Error(`${hostname} has no address`));
      });
    });
  }) as unknown as LookupFunction;
}

/**
 * Calls to untrusted URLs (workflow WEBHOOK steps, outbound webhooks): through agents that refuse private, loopback,
 * link-local and metadata addresses once DNS has answered (`allowedAddresses` excepted), resolving through
 * `dnsServers` when given. One request per send, settled once: by a redirect's head (its body is never read), by the
 * body's end or its first `maxBodyBytes`, or by the signal, which ends the connection whatever state it is in.
 */
export function createOutboundCaller(options: { dnsServers: readonly string[]; allowedAddresses: readonly string[] }): OutboundCaller {
  const lookup = lookupThrough(options.dnsServers);
  // Connections are kept for the next call to the same origin: a TCP (and TLS) handshake per call cost more than the call.
  // A kept connection was checked when it was opened; Node retires it before the Keep-Alive timeout its server announced.
  const filtering = { keepAlive: true, allowIPAddressList: [...options.allowedAddresses], ...(lookup ? { lookup } : {}) };
  const agents = { "http:": new RequestFilteringHttpAgent(filtering), "https:": new RequestFilteringHttpsAgent(filtering) };

  function send(url: URL, { method, headers, body, signal, maxBodyBytes }: OutboundRequest): Promise<OutboundResponse> {
    const agent = url.protocol === "https:" ? agents["https:"] : url.protocol === "http:" ? agents["http:"] : undefined;
    if (!agent) return Promise.reject(new OutboundRefused(`${url.protocol} URLs are not allowed`));
    if (signal.aborted) return Promise.reject(new OutboundAborted());
    const request = url.protocol === "https:" ? https.request : http.request;
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (finish: () => void) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener("abort", onAbort);
        finish();
      };
      const outgoing = request(url, { method, headers, agent }, (response) => {
        const status = response.statusCode ?? 0;
        const location = response.headers.location;
        const answer = (text: string) => settle(() => resolve({ status, body: text, ...(location ? { location } : {}) }));
        if (status >= 300 && status < 400 && location) {
          answer("");
          response.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        const complete = () => answer(Buffer.concat(chunks).subarray(0, maxBodyBytes).toString("utf8"));
        response.on("data", (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size < maxBodyBytes) return;
          complete();
          response.destroy();
        });
        response.on("end", complete);
        response.on("error", (error) => settle(() => reject(error)));
      });
      function onAbort() {
        settle(() => reject(new OutboundAborted()));
        outgoing.destroy();
      }
      signal.addEventListener("abort", onAbort, { once: true });
      outgoing.on("error", (error) =>
        settle(() => reject(/is not allowed/.test(error.message) ? new OutboundRefused(error.message) : error)),
      );
      outgoing.end(body);
    });
  }

  return { send };
}
