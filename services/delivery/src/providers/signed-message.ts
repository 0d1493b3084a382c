import { createHash, type KeyObject, randomUUID } from "node:crypto";
import { compile } from "html-to-text";
import type { SendMailOptions } from "nodemailer";
import * as base64 from "nodemailer/lib/base64";
import signDkim from "nodemailer/lib/dkim/sign";
import MailComposer from "nodemailer/lib/mail-composer";
import type MimeNode from "nodemailer/lib/mime-node";
import * as quotedPrintable from "nodemailer/lib/qp";

// This module is also the entry of the build threads (message-builder.ts). It imports packages only and
// its TypeScript is all erasable, so that a thread can load it as it is where nothing was compiled (tests).

export interface BuildRequest {
  /** The message without its plain-text part, which is made here from the HTML. */
  message: SendMailOptions & { html: string };
  dkim: DkimKey;
  /** The header fields the signature covers, `:`-separated. */
  headerFieldNames: string;
}

export interface DkimKey {
  domainName: string;
  keySelector: string;
  privateKey: KeyObject;
}

export interface BuiltMessage {
  /** The message as it goes on the wire: RFC 5322, CRLF line ends, the DKIM-Signature field first. */
  raw: Uint8Array;
  envelope: NonNullable<SendMailOptions["envelope"]>;
}

/** Compiled once: compiling the options on every call cost as much as converting a receipt. */
const toPlainText = compile({
  wordwrap: 78,
  selectors: [
    { selector: "img", format: "skip" },
    { selector: "a", options: { hideLinkHrefIfSameAsText: true } },
  ],
});

/** The plain-text alternative: links as `text [url]`, images (the open pixel among them) left out. */
export function plainTextOf(html: string): string {
  return toPlainText(html);
}

/** A Buffer again: bytes that crossed between threads arrive as a plain Uint8Array, which nodemailer does not take. */
export const bufferOf = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * Builds the message with nodemailer's composer and signs it with nodemailer's DKIM signature: the
 * CPU-heavy part of a send (HTML to text, MIME encoding, RSA), done before the message waits for a
 * relay connection, and in a build thread when there are any.
 */
export async function buildSignedMessage({ message, dkim, headerFieldNames }: BuildRequest): Promise<BuiltMessage> {
  const root = new MailComposer({
    // Otherwise each MIME part draws its own 8 random bytes: a UUID comes from a buffered pool.
    baseBoundary: randomUUID(),
    ...message,
    text: plainTextOf(message.html),
    attachments: (message.attachments ?? []).map((attachment) => ({
      ...attachment,
      content: attachment.content instanceof Uint8Array ? bufferOf(attachment.content) : attachment.content,
    })),
    // Content is always given inline: never let a message read a local file or fetch a URL.
    disableFileAccess: true,
    disableUrlAccess: true,
  }).compile();
  return { raw: signedMessageOf(root, dkim, headerFieldNames), envelope: message.envelope ?? root.getEnvelope() };
}

export default buildSignedMessage;

/**
 * The message of a compiled MIME tree, DKIM-signed (relaxed/relaxed, RSA-SHA256), byte for byte what
 * nodemailer's streams make of it (`root.build()` with CRLF line ends, then its DKIM signer), which
 * signed-message.test.ts holds it to. It is made in one synchronous pass from the same parts of
 * nodemailer: the tree's own header encoding (`buildHeaders`), its quoted-printable and base64
 * encoders, and its DKIM signature over the parsed header fields. The streams cost two thirds of a
 * millisecond a message, more than the RSA signature; this costs a tenth of that.
 */
export function signedMessageOf(root: MimeNode, dkim: DkimKey, headerFieldNames: string): Buffer {
  const chunks: Buffer[] = [];
  writeNode(root, chunks);
  const message = withCrlfLineEnds(Buffer.concat(chunks).toString("latin1"));
  const headerEnd = message.indexOf("\r\n\r\n");
  const bodyStart = headerEnd === -1 ? message.length : headerEnd + 4;
  const signature = signDkim(headerFieldsOf(message.slice(0, bodyStart)), "sha256", relaxedBodyHash(message.slice(bodyStart)), {
    ...dkim,
    headerFieldNames,
  });
  // nodemailer's signer passes a message it failed to sign on unsigned; that one must never reach a relay.
  if (signature === false) throw new Error(`the message could not be DKIM-signed for ${dkim.domainName}`);
  return Buffer.from(`${signature}\r\n${message}`, "latin1");
}

/** What MimeNode.stream writes for a node: its header block, its encoded content, then its parts. */
function writeNode(node: MimeNode, chunks: Buffer[]): void {
  chunks.push(Buffer.from(`${node.buildHeaders()}\r\n\r\n`));
  const content = node.content;
  if (content) {
    if (typeof content !== "string" && !Buffer.isBuffer(content)) throw new Error("a message part's content must be given inline");
    const bytes = typeof content === "string" ? Buffer.from(content) : content;
    const encoding = node.getTransferEncoding();
    if (encoding === "quoted-printable") chunks.push(Buffer.from(quotedPrintableOf(bytes), "latin1"));
    else if (encoding === "base64") chunks.push(Buffer.from(base64.wrap(base64.encode(bytes), 76), "latin1"));
    else chunks.push(bytes);
  }
  if (!node.multipart) return;
  node.childNodes.forEach((child, index) => {
    chunks.push(Buffer.from(`${index > 0 ? "\r\n" : ""}--${node.boundary}\r\n`));
    writeNode(child, chunks);
  });
  chunks.push(Buffer.from(`\r\n--${node.boundary}--\r\n`));
}

/** nodemailer's encoder streams take 64 KiB at a time. */
const encoderSliceBytes = 64 * 1024;

/**
 * What nodemailer's quoted-printable Encoder stream writes for content written to it in one piece, from
 * its exported `encode` and `wrap`: whitespace at the end held back and encoded last, the rest in slices
 * of 64 KiB, each wrapped after the line the slice before left open. Wrapping the whole at once breaks
 * some lines elsewhere.
 */
function quotedPrintableOf(bytes: Buffer): string {
  let end = bytes.length;
  while (end > 0 && (bytes[end - 1] === 0x20 || bytes[end - 1] === 0x09)) end--;
  const heldBack = bytes.length - end <= encoderSliceBytes;
  let encoded = "";
  let openLine = "";
  for (const part of heldBack ? [bytes.subarray(0, end), bytes.subarray(end)] : [bytes]) {
    for (let start = 0; start < part.length; start += encoderSliceBytes) {
      const slice = part.subarray(start, start + encoderSliceBytes);
      const wrapped = quotedPrintable.wrap(openLine + encodedBefore(slice, part[start + encoderSliceBytes]), 76);
      const lastLineBreak = wrapped.lastIndexOf("\n");
      openLine = wrapped.slice(lastLineBreak + 1);
      encoded += wrapped.slice(0, lastLineBreak + 1);
    }
  }
  return encoded + openLine;
}

/** A slice encoded as the encoder does when `next` follows it: whitespace at its end stays literal unless a line break follows. */
function encodedBefore(slice: Buffer, next: number | undefined): string {
  if (next === undefined) return quotedPrintable.encode(slice);
  // Each byte's encoding depends on the byte after it only, so the slice's is the pair's without next's own.
  const nextAlone = quotedPrintable.encode(Buffer.of(next));
  const both = quotedPrintable.encode(Buffer.concat([slice, Buffer.of(next)]));
  return both.slice(0, both.length - nextAlone.length);
}

/**
 * A message (bytes as latin1 characters) with the line ends of RFC 5322 in the message itself, not only on
 * the SMTP wire (SES takes it as it is): a final line break, and CRLF for every bare LF, as nodemailer does.
 */
function withCrlfLineEnds(message: string): string {
  const ended = message.endsWith("\n") ? message : message.endsWith("\r") ? `${message}\n` : `${message}\r\n`;
  return ended.replace(/(?<!\r)\n/g, "\r\n");
}

/** The header block's fields as nodemailer's DKIM signer reads them: folded lines joined, named in lower case. */
function headerFieldsOf(headerBlock: string): Array<{ key: string; line: string }> {
  const lines: string[] = [];
  for (const line of headerBlock.split(/\r?\n/)) {
    if (lines.length > 0 && /^[ \t]/.test(line)) lines[lines.length - 1] += `\n${line}`;
    else lines.push(line);
  }
  return lines
    .filter((line) => /[^ \t\r]/.test(line))
    .map((line) => ({ key: trimSpaceAndTab(line.slice(0, Math.max(line.indexOf(":"), 0))).toLowerCase(), line }));
}

/** SP and HTAB off both ends, and no other space: by index, since `/[ \t]+$/` takes quadratic time on a long run. */
function trimSpaceAndTab(text: string): string {
  const blank = (index: number) => text[index] === " " || text[index] === "\t";
  let start = 0;
  let end = text.length;
  while (start < end && blank(start)) start++;
  while (end > start && blank(end - 1)) end--;
  return text.slice(start, end);
}

/**
 * The body hash of RFC 6376 section 3.4.4 (relaxed): whitespace at a line's end dropped, runs of it
 * within a line made one space, empty lines at the end ignored, and a body that is not empty ended
 * with CRLF. A line ends at LF, a CR right before it included; any other CR is content. The body has
 * CRLF line ends (withCrlfLineEnds), and most have no whitespace to change: quoted-printable and base64
 * leave none at a line's end.
 */
export function relaxedBodyHash(body: string): string {
  let canonical = body;
  if (/\t|[ \t][ \t\r\n]| $|(?<!\r)\n/.test(body)) {
    canonical = body
      .split(/\r?\n/)
      .map((line) => line.replace(/[ \t]+/g, " ").replace(/ $/, ""))
      .join("\r\n");
  }
  let end = canonical.length;
  while (end >= 2 && canonical.startsWith("\r\n", end - 2)) end -= 2;
  return createHash("sha256")
    .update(end === 0 ? "" : `${canonical.slice(0, end)}\r\n`, "latin1")
    .digest("base64");
}
