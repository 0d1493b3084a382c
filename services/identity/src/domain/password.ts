import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";
import type { FieldViolation } from "@herald/errors";

export const minPasswordLength = 8;
export const maxPasswordLength = 256;

export function passwordViolation(password: string, field = "password"): FieldViolation | undefined {
  if (password.length < minPasswordLength) {
    return { field, message: `Password must be at least ${minPasswordLength} characters`, code: "password_too_short" };
  }
  if (password.length > maxPasswordLength) {
    return { field, message: `Password must be at most ${maxPasswordLength} characters`, code: "password_too_long" };
  }
  return undefined;
}

interface ScryptParameters {
  logN: number;
  r: number;
  p: number;
}

const keyLength = 32;
const saltLength = 16;

function derive(password: string, salt: Buffer, { logN, r, p }: ScryptParameters): Promise<Buffer> {
  const N = 2 ** logN;
  // Node refuses more than 32 MiB by default; scrypt needs 128·N·r bytes, so allow twice that.
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize("NFKC"), salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

function parse(stored: string): (ScryptParameters & { salt: Buffer; hash: Buffer }) | undefined {
  const [scheme, logN, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !logN || !r || !p || !salt || !hash) return undefined;
  return { logN: Number(logN), r: Number(r), p: Number(p), salt: Buffer.from(salt, "base64"), hash: Buffer.from(hash, "base64") };
}

export interface PasswordHasher {
  /** `scrypt$<logN>$<r>$<p>$<salt>$<hash>`: the parameters travel with the hash, so the cost can be raised later. */
  hash(password: string): Promise<string>;
  verify(password: string, stored: string): Promise<boolean>;
  /** Spends the same time as a verification, for logins whose address has no password to check. */
  verifyNothing(password: string): Promise<void>;
  /** True when a stored hash was made with weaker parameters than today's. */
  needsRehash(stored: string): boolean;
}

export function createPasswordHasher(options: { logN: number }): PasswordHasher {
  const current: ScryptParameters = { logN: options.logN, r: 8, p: 1 };
  async function hash(password: string): Promise<string> {
    const salt = randomBytes(saltLength);
    const key = await derive(password, salt, current);
    return ["scrypt", current.logN, current.r, current.p, salt.toString("base64"), key.toString("base64")].join("$");
  }

  async function verify(password: string, stored: string): Promise<boolean> {
    const parsed = parse(stored);
    if (!parsed) return false;
    const key = await derive(password, parsed.salt, parsed);
    return key.length === parsed.hash.length && timingSafeEqual(key, parsed.hash);
  }

  // Made at once, so that not even the first unknown address costs an extra hash.
  const decoy = hash(randomBytes(16).toString("hex"));

  return {
    hash,
    verify,
    async verifyNothing(password) {
      await verify(password, await decoy);
    },
    needsRehash(stored) {
      const parsed = parse(stored);
      return !parsed || parsed.logN < current.logN || parsed.r !== current.r || parsed.p !== current.p;
    },
  };
}
