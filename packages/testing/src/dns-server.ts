import { createSocket, type RemoteInfo } from "node:dgram";
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, createServer as createTcpServer, type Socket } from "node:net";

/**
 * A real DNS server on 127.0.0.1 for tests, answering TXT, MX, A, AAAA, NS and SOA queries (over UDP and
 * TCP, on one port) from an in-memory map; every other name is NXDOMAIN, every other type
 * at a known name is an empty answer, and a name set to fail answers SERVFAIL. Tests in
 * other processes set records through a small HTTP control port (testDnsClient).
 * Deliberately tiny: one question per query, no compression in what it reads, answers
 * with TTL 0 so that nothing is cached.
 */
export interface MxRecord {
  priority: number;
  /** The mail server's name; "." for a null MX (RFC 7505). */
  exchange: string;
}

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, as DNS_SERVERS takes it. */
  address: string;
  controlUrl: string;
  setTxt(name: string, records: string[]): void;
  /** Removes the name's TXT records, and the name itself when it has no others. */
  deleteTxt(name: string): void;
  setMx(name: string, records: MxRecord[]): void;
  /** A records (IPv4 addresses). */
  setA(name: string, addresses: string[]): void;
  /** AAAA records (IPv6 addresses). */
  setAaaa(name: string, addresses: string[]): void;
  /** NS records: the names of the zone's name servers. */
  setNs(name: string, servers: string[]): void;
  /** An SOA record naming the zone's primary server (the other fields are fixed). */
  setSoa(name: string, primary: string): void;
  /** Every query of the name answers SERVFAIL, as a broken authoritative server makes resolvers do. */
  failName(name: string): void;
  stop(): Promise<void>;
}

const A = 1;
const NS = 2;
const SOA = 6;
const MX = 15;
const AAAA = 28;
const TXT = 16;
const SERVFAIL = 2;
const NXDOMAIN = 3;
const FORMERR = 1;
const classicUdpLimit = 512;

const normalise = (name: string) => name.toLowerCase().replace(/\.$/, "");

/** What one name has: the record data of each type, or a failure. */
interface NameRecords {
  failing: boolean;
  rdata: Map<number, Buffer[]>;
}

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

/** A name as labels (uncompressed); "." or "" is the root. */
function nameBytes(name: string): Buffer {
  const labels = normalise(name)
    .split(".")
    .filter((label) => label !== "");
  return Buffer.concat([
    ...labels.map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label, "latin1")])),
    Buffer.from([0]),
  ]);
}

function mxRdata(record: MxRecord): Buffer {
  const preference = Buffer.alloc(2);
  preference.writeUInt16BE(record.priority);
  return Buffer.concat([preference, nameBytes(record.exchange)]);
}

function aRdata(address: string): Buffer {
  const octets = address.split(".").map(Number);
  if (octets.length !== 4 || octets.some((octet) => !Number.isInteger(octet) || octet < 0 || octet > 255)) {
    throw new Error(`${address} is not an IPv4 address`);
  }
  return Buffer.from(octets);
}

function aaaaRdata(address: string): Buffer {
  const bytes = ipv6Bytes(address);
  if (!bytes) throw new Error(`${address} is not an IPv6 address`);
  return bytes;
}

/** The 16 bytes of an IPv6 address written in full or with one `::`. */
function ipv6Bytes(address: string): Buffer | undefined {
  const halves = address.split("::");
  if (halves.length > 2) return undefined;
  const groupsOf = (part: string | undefined) => (part ? part.split(":") : []);
  const head = groupsOf(halves[0]);
  const tail = groupsOf(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 1 ? 0 : missing).fill("0"), ...tail];
  if (groups.some((group) => !/^[0-9a-f]{1,4}$/i.test(group))) return undefined;
  const out = Buffer.alloc(16);
  for (const [index, group] of groups.entries()) out.writeUInt16BE(Number.parseInt(group, 16), index * 2);
  return out;
}

/** SOA data: the primary server, a fixed mailbox, then serial, refresh, retry, expire and minimum. */
function soaRdata(primary: string): Buffer {
  const numbers = Buffer.alloc(20);
  for (const [index, value] of [1, 3600, 600, 86400, 0].entries()) numbers.writeUInt32BE(value, index * 4);
  return Buffer.concat([nameBytes(primary), nameBytes(`hostmaster.${normalise(primary)}`), numbers]);
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

function answer(records: Map<string, NameRecords>, query: Buffer, transport: "udp" | "tcp"): Buffer | undefined {
  if (query.length < 12) return undefined;
  const question = readQuestion(query);
  if (!question) return header(query, { rcode: FORMERR, answers: 0, truncated: false, questions: 0 });
  const entry = records.get(question.name);
  if (entry === undefined || entry.failing) {
    const rcode = entry === undefined ? NXDOMAIN : SERVFAIL;
    return Buffer.concat([header(query, { rcode, answers: 0, truncated: false, questions: 1 }), question.raw]);
  }
  const answers = entry.rdata.get(question.type) ?? [];
  const resourceRecords = answers.map((rdata) => {
    const fixed = Buffer.alloc(12);
    fixed.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    fixed.writeUInt16BE(question.type, 2);
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
  const records = new Map<string, NameRecords>();
  const entryOf = (name: string) => {
    const key = normalise(name);
    const existing = records.get(key);
    if (existing) return existing;
    const created: NameRecords = { failing: false, rdata: new Map() };
    records.set(key, created);
    return created;
  };
  const setTxt = (name: string, texts: string[]) => {
    const rdata = texts.map(txtRdata);
    entryOf(name).rdata.set(TXT, rdata);
  };
  const deleteTxt = (name: string) => {
    const entry = records.get(normalise(name));
    entry?.rdata.delete(TXT);
    if (entry && entry.rdata.size === 0 && !entry.failing) records.delete(normalise(name));
  };
  // The record data first: a record it cannot encode throws before the name comes to exist.
  const setMx = (name: string, mx: MxRecord[]) => {
    const rdata = mx.map(mxRdata);
    entryOf(name).rdata.set(MX, rdata);
  };
  const setA = (name: string, addresses: string[]) => {
    const rdata = addresses.map(aRdata);
    entryOf(name).rdata.set(A, rdata);
  };
  const setAaaa = (name: string, addresses: string[]) => {
    const rdata = addresses.map(aaaaRdata);
    entryOf(name).rdata.set(AAAA, rdata);
  };
  const setNs = (name: string, servers: string[]) => {
    const rdata = servers.map(nameBytes);
    entryOf(name).rdata.set(NS, rdata);
  };
  const setSoa = (name: string, primary: string) => {
    const rdata = [soaRdata(primary)];
    entryOf(name).rdata.set(SOA, rdata);
  };
  const failName = (name: string) => {
    entryOf(name).failing = true;
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

  // PUT /<type>/<name> sets the name's records of a type from a JSON array (texts for txt, { priority, exchange }
  // for mx, IPv4 addresses for a, IPv6 addresses for aaaa, server names for ns, one primary server's name for soa); PUT /fail/<name> makes it answer SERVFAIL; DELETE /txt/<name> removes its TXT.
  const isStrings = (body: unknown): body is string[] => Array.isArray(body) && body.every((item) => typeof item === "string");
  const isMxRecords = (body: unknown): body is MxRecord[] =>
    Array.isArray(body) && body.every((record: MxRecord) => Number.isInteger(record?.priority) && typeof record?.exchange === "string");
  /** Applies a PUT; false when its body is not what the kind takes. */
  function put(kind: string, name: string, body: unknown): boolean {
    if (kind === "txt" && isStrings(body)) setTxt(name, body);
    else if (kind === "mx" && isMxRecords(body)) setMx(name, body);
    else if (kind === "a" && isStrings(body)) setA(name, body);
    else if (kind === "aaaa" && isStrings(body)) setAaaa(name, body);
    else if (kind === "ns" && isStrings(body)) setNs(name, body);
    else if (kind === "soa" && isStrings(body) && body.length === 1) setSoa(name, body[0] ?? "");
    else if (kind === "fail") failName(name);
    else return false;
    return true;
  }
  const control = createHttpServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const match = /^\/(txt|mx|a|aaaa|ns|soa|fail)\/([^/?]+)$/.exec(request.url ?? "");
    const [kind, encodedName] = match ? [match[1] ?? "", match[2] ?? ""] : ["", ""];
    const name = decodeURIComponent(encodedName);
    try {
      if (match && request.method === "PUT") {
        const body: unknown = JSON.parse(Buffer.concat(chunks).toString() || "[]");
        if (!put(kind, name, body)) {
          response.writeHead(400).end(`not a body for ${kind} records`);
          return;
        }
        response.writeHead(204).end();
      } else if (kind === "txt" && request.method === "DELETE") {
        deleteTxt(name);
        response.writeHead(204).end();
      } else {
        response.writeHead(404).end();
      }
    } catch (error) {
      response.writeHead(400).end(String(error));
    }
  });
  await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve));

  return {
    address: `127.0.0.1:${port}`,
    controlUrl: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
    setTxt,
    deleteTxt,
    setMx,
    setA,
    setAaaa,
    setNs,
    setSoa,
    failName,
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
  async function send(method: "PUT" | "DELETE", path: string, body?: unknown): Promise<void> {
    const response = await fetch(`${controlUrl}/${path}`, {
      method,
      headers: body ? { "content-type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    if (response.status !== 204) throw new Error(`test DNS server answered ${response.status} to ${method} ${path}`);
  }
  const at = (kind: string, name: string) => `${kind}/${encodeURIComponent(name)}`;
  return {
    setTxt: (name: string, records: string[]) => send("PUT", at("txt", name), records),
    deleteTxt: (name: string) => send("DELETE", at("txt", name)),
    setMx: (name: string, records: MxRecord[]) => send("PUT", at("mx", name), records),
    setA: (name: string, addresses: string[]) => send("PUT", at("a", name), addresses),
    setAaaa: (name: string, addresses: string[]) => send("PUT", at("aaaa", name), addresses),
    setNs: (name: string, servers: string[]) => send("PUT", at("ns", name), servers),
    setSoa: (name: string, primary: string) => send("PUT", at("soa", name), [primary]),
    failName: (name: string) => send("PUT", at("fail", name), []),
  };
}
