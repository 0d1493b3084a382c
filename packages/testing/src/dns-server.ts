import { createSocket, type RemoteInfo } from "node:dgram";
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, createServer as createTcpServer, type Socket } from "node:net";

/**
 * A real DNS server on 127.0.0.1 for tests, answering TXT queries (over UDP and TCP, on
 * one port) from an in-memory map; every other name is NXDOMAIN and every other type at
 * a known name is an empty answer. Tests in other processes set records through a small
 * HTTP control port (testDnsClient). Deliberately tiny: one question per query, no
 * compression in what it reads, answers with TTL 0 so that nothing is cached.
 */
export interface TestDnsServer {
  /** `127.0.0.1:<port>`, as DNS_SERVERS takes it. */
  address: string;
  controlUrl: string;
  setTxt(name: string, records: string[]): void;
  deleteTxt(name: string): void;
  stop(): Promise<void>;
}

const TXT = 16;
const NXDOMAIN = 3;
const FORMERR = 1;
const classicUdpLimit = 512;

const normalise = (name: string) => name.toLowerCase().replace(/\.$/, "");

interface Question {
  name: string;
  type: number;
  /** The question's bytes (header excluded), copied into the answer. */
  raw: Buffer;
  /** The EDNS payload size the client offered, or 512 without an OPT record. */
  udpLimit: number;
}

function readQuestion(query: Buffer): Question | undefined {
  if (query.length < 12 || query.readUInt16BE(4) !== 1) return undefined;
  const labels: string[] = [];
  let offset = 12;
  for (;;) {
    const length = query[offset];
    if (length === undefined || length > 63) return undefined;
    offset += 1;
    if (length === 0) break;
    labels.push(query.subarray(offset, offset + length).toString("latin1"));
    offset += length;
  }
  if (offset + 4 > query.length) return undefined;
  const type = query.readUInt16BE(offset);
  const raw = query.subarray(12, offset + 4);
  offset += 4;
  // An OPT record (root name, type 41) in the additional section carries the client's UDP size in its class.
  const hasOpt = query.readUInt16BE(10) > 0 && query[offset] === 0 && query.length >= offset + 5 && query.readUInt16BE(offset + 1) === 41;
  const udpLimit = hasOpt ? Math.max(classicUdpLimit, query.readUInt16BE(offset + 3)) : classicUdpLimit;
  return { name: normalise(labels.join(".")), type, raw, udpLimit };
}

/** A TXT record's strings: one text split into character-strings of at most 255 bytes. */
function txtRdata(text: string): Buffer {
  const bytes = Buffer.from(text, "utf8");
  const parts: Buffer[] = [];
  for (let start = 0; start < bytes.length || start === 0; start += 255) {
    const chunk = bytes.subarray(start, start + 255);
    parts.push(Buffer.from([chunk.length]), chunk);
    if (bytes.length === 0) break;
  }
  return Buffer.concat(parts);
}

function header(query: Buffer, options: { rcode: number; answers: number; truncated: boolean; questions: number }): Buffer {
  const out = Buffer.alloc(12);
  out.writeUInt16BE(query.readUInt16BE(0), 0);
  const opcode = (query[2] ?? 0) & 0x78;
  const recursionDesired = (query[2] ?? 0) & 0x01;
  out[2] = 0x80 | opcode | 0x04 | (options.truncated ? 0x02 : 0) | recursionDesired;
  out[3] = 0x80 | options.rcode;
  out.writeUInt16BE(options.questions, 4);
  out.writeUInt16BE(options.answers, 6);
  return out;
}

function answer(records: Map<string, string[]>, query: Buffer, transport: "udp" | "tcp"): Buffer | undefined {
  if (query.length < 12) return undefined;
  const question = readQuestion(query);
  if (!question) return header(query, { rcode: FORMERR, answers: 0, truncated: false, questions: 0 });
  const texts = records.get(question.name);
  if (texts === undefined)
    return Buffer.concat([header(query, { rcode: NXDOMAIN, answers: 0, truncated: false, questions: 1 }), question.raw]);
  const answers = question.type === TXT ? texts : [];
  const resourceRecords = answers.map((text) => {
    const rdata = txtRdata(text);
    const fixed = Buffer.alloc(12);
    fixed.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    fixed.writeUInt16BE(TXT, 2);
    fixed.writeUInt16BE(1, 4); // IN
    fixed.writeUInt32BE(0, 6); // TTL 0: never cached
    fixed.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([fixed, rdata]);
  });
  const full = Buffer.concat([
    header(query, { rcode: 0, answers: answers.length, truncated: false, questions: 1 }),
    question.raw,
    ...resourceRecords,
  ]);
  if (transport === "udp" && full.length > question.udpLimit) {
    // Too big for this client over UDP: truncated, so that it asks again over TCP.
    return Buffer.concat([header(query, { rcode: 0, answers: 0, truncated: true, questions: 1 }), question.raw]);
  }
  return full;
}

export async function startTestDnsServer(): Promise<TestDnsServer> {
  const records = new Map<string, string[]>();
  const setTxt = (name: string, texts: string[]) => {
    records.set(normalise(name), [...texts]);
  };
  const deleteTxt = (name: string) => {
    records.delete(normalise(name));
  };

  const connections = new Set<Socket>();
  const tcp = createTcpServer((socket) => {
    connections.add(socket);
    socket.on("close", () => connections.delete(socket));
    socket.on("error", () => socket.destroy());
    let pending = Buffer.alloc(0);
    socket.on("data", (data) => {
      pending = Buffer.concat([pending, data]);
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const query = pending.subarray(2, 2 + pending.readUInt16BE(0));
        pending = pending.subarray(2 + query.length);
        const reply = answer(records, query, "tcp");
        if (!reply) continue;
        const length = Buffer.alloc(2);
        length.writeUInt16BE(reply.length);
        socket.write(Buffer.concat([length, reply]));
      }
    });
  });
  /** A UDP socket on a free port of 127.0.0.1, answering queries. */
  const bindUdp = async () => {
    const socket = createSocket("udp4");
    socket.on("message", (query: Buffer, remote: RemoteInfo) => {
      const reply = answer(records, query, "udp");
      if (reply) socket.send(reply, remote.port, remote.address);
    });
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(0, "127.0.0.1", () => resolve());
    });
    return socket;
  };
  const listenTcp = (port: number) =>
    new Promise<void>((resolve, reject) => {
      tcp.once("error", reject);
      tcp.listen(port, "127.0.0.1", () => {
        tcp.off("error", reject);
        resolve();
      });
    });
  // The free UDP port the system chose may be taken for TCP (another process's connection): then take another.
  let udp = await bindUdp();
  for (let attempt = 1; ; attempt++) {
    try {
      await listenTcp(udp.address().port);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE" || attempt === 10) throw error;
      const taken = udp;
      await new Promise<void>((resolve) => taken.close(() => resolve()));
      udp = await bindUdp();
    }
  }
  const port = udp.address().port;

  // PUT /txt/<name> with a JSON array of texts sets the name's TXT records; DELETE /txt/<name> removes the name.
  const control = createHttpServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const match = /^\/txt\/([^/?]+)$/.exec(request.url ?? "");
    const name = match?.[1] ? decodeURIComponent(match[1]) : undefined;
    if (name && request.method === "PUT") {
      const texts: unknown = JSON.parse(Buffer.concat(chunks).toString() || "[]");
      if (!Array.isArray(texts) || !texts.every((text) => typeof text === "string")) {
        response.writeHead(400).end("body must be a JSON array of strings");
        return;
      }
      setTxt(name, texts);
      response.writeHead(204).end();
    } else if (name && request.method === "DELETE") {
      deleteTxt(name);
      response.writeHead(204).end();
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve));

  return {
    address: `127.0.0.1:${port}`,
    controlUrl: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
    setTxt,
    deleteTxt,
    async stop() {
      for (const socket of connections) socket.destroy();
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => tcp.close(() => resolve())),
        new Promise<void>((resolve) => control.close(() => resolve())),
      ]);
    },
  };
}

/** Sets records of a TestDnsServer from another process (a test file), through its control port. */
export function testDnsClient(controlUrl: string) {
  async function send(method: "PUT" | "DELETE", name: string, body?: string[]): Promise<void> {
    const response = await fetch(`${controlUrl}/txt/${encodeURIComponent(name)}`, {
      method,
      headers: body ? { "content-type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    if (response.status !== 204) throw new Error(`test DNS server answered ${response.status} to ${method} ${name}`);
  }
  return {
    setTxt: (name: string, records: string[]) => send("PUT", name, records),
    deleteTxt: (name: string) => send("DELETE", name),
  };
}
