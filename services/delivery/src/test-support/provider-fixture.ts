import { randomUUID } from "node:crypto";
import { dkimVerify } from "mailauth";
import { type DkimSigningKey, SendFailure } from "../providers/mail-provider.js";
import type { OutgoingEmail } from "../providers/message.js";
import { generateDkimKeyPair } from "../sending-domains/dkim-keys.js";

/** The sending domain and DKIM selector of the provider tests. */
export const testDomain = "mail.example.com";
export const testSelector = "herald1";

/** A fresh DKIM key of testDomain, and a checker that verifies a message against its public half. */
export async function testSigning(): Promise<{ dkim: DkimSigningKey; dkimResultOf(raw: Buffer | string): Promise<string | undefined> }> {
  const { publicKey, privateKeyPem } = await generateDkimKeyPair();
  /** DNS as mailauth asks it, answering only the domain's DKIM record. */
  const resolver = async (name: string, type: string): Promise<string[][]> => {
    if (type === "TXT" && name.toLowerCase() === `${testSelector}._domainkey.${testDomain}`) return [[`v=DKIM1; k=rsa; p=${publicKey}`]];
    throw Object.assign(new Error(`no ${type} record at ${name}`), { code: "ENOTFOUND" });
  };
  return {
    dkim: { domainName: testDomain, keySelector: testSelector, privateKey: privateKeyPem },
    async dkimResultOf(raw) {
      // Strict: RFC 6376, 8301 and 8463 to the letter (the lenient default reports a broken body hash as neutral).
      const verification = await dkimVerify(Buffer.from(raw), { resolver, strict: true });
      if (verification.results.length !== 1) throw new Error(`expected one DKIM signature, found ${verification.results.length}`);
      return verification.results[0]?.status?.result;
    },
  };
}

/** An order-shipped email from testDomain to a new address, with the given changes. */
export function outgoingEmail(change: Partial<OutgoingEmail> = {}): OutgoingEmail {
  return {
    emailId: randomUUID(),
    from: { email: `orders@${testDomain}`, name: "Example Shop" },
    to: { email: `${randomUUID()}@example.org`, name: "Ada Lovelace" },
    subject: "Order 1234 has shipped",
    html: '<h1>Thanks, Ada</h1><p>Order 1234 is on its way. <a href="https://shop.example/track/1234">Track it</a>.</p>',
    messageIdDomain: testDomain,
    ...change,
  };
}

/** The SendFailure a send rejected with; throws when it succeeded or failed otherwise. */
export async function failureOf(sending: Promise<unknown>): Promise<SendFailure> {
  const outcome = await sending.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(outcome instanceof SendFailure)) throw new Error(`expected a SendFailure, got ${String(outcome)}`);
  return outcome;
}
