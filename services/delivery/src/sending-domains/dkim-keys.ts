import { createCipheriv, createDecipheriv, createHash, generateKeyPair, randomBytes } from "node:crypto";
import { promisify } from "node:util";

const generateRsaKeyPair = promisify(generateKeyPair);

/** Known to everyone: only for development, where DKIM_ENCRYPTION_KEY is unset (config refuses that in production). */
export const developmentEncryptionKey = createHash("sha256").update("herald development DKIM key: not a secret").digest();

/** 32 bytes given as 64 hex digits or as base64; undefined for anything else. */
export function parseEncryptionKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64");
  return key.length === 32 ? key : undefined;
}

export interface DkimKeyPair {
  /** Base64 of the DER SubjectPublicKeyInfo: the p= of the DKIM record. */
  publicKey: string;
  /** PKCS#8 PEM. */
  privateKeyPem: string;
}

/** A fresh 2048-bit RSA key (RFC 8301 asks for at least 1024; 2048 is what providers publish). */
export async function generateDkimKeyPair(): Promise<DkimKeyPair> {
  const { publicKey, privateKey } = await generateRsaKeyPair("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "der" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  return { publicKey: publicKey.toString("base64"), privateKeyPem: privateKey };
}

const version = "v1";

/**
 * AES-256-GCM with a random 96-bit IV: `v1.<iv>.<tag>.<ciphertext>`, each base64url.
 * The domain's id is the associated data, so a ciphertext copied onto another row does not decrypt.
 */
export function encryptPrivateKey(key: Buffer, privateKeyPem: string, domainId: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(domainId));
  const ciphertext = Buffer.concat([cipher.update(privateKeyPem, "utf8"), cipher.final()]);
  return [version, iv, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
    .join(".");
}

export function decryptPrivateKey(key: Buffer, sealed: string, domainId: string): string {
  const [tag, iv, authTag, ciphertext] = sealed.split(".");
  if (tag !== version || !iv || !authTag || ciphertext === undefined) throw new Error("not a sealed DKIM key");
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
  decipher.setAAD(Buffer.from(domainId));
  decipher.setAuthTag(Buffer.from(authTag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
}
