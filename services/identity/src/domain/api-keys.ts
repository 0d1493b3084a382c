import { createHash, randomBytes } from "node:crypto";

export type KeyKind = "secret" | "public";

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** 43 base62 characters carry 256 bits, as many as the 32 random bytes they stand for. */
const keyBodyLength = 43;

/** Uniform base62: bytes of 248 and above are skipped, so that `% 62` favours no character. */
function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length)) {
      if (byte < 248 && out.length < length) out += alphabet[byte % 62];
    }
  }
  return out;
}

export interface ProjectKeys {
  secretKey: string;
  publicKey: string;
}

export const generateProjectKeys = (): ProjectKeys => ({
  secretKey: `sk_${randomBase62(keyBodyLength)}`,
  publicKey: `pk_${randomBase62(keyBodyLength)}`,
});

export function keyKindOf(key: string): KeyKind | undefined {
  if (key.startsWith("sk_")) return "secret";
  if (key.startsWith("pk_")) return "public";
  return undefined;
}

/** The secret key is looked up by its digest; a fast hash suffices for 256 random bits. */
export const hashSecretKey = (secretKey: string): string => createHash("sha256").update(secretKey).digest("hex");

/** Enough of the key to recognise it in a list, far too little to use it. */
export const secretKeyHintOf = (secretKey: string): string => `${secretKey.slice(0, 8)}…`;
