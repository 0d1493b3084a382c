import { createHmac, createSecretKey } from "node:crypto";
import { normaliseAddress } from "./email-input.js";

/** The keyed hash a suppression keeps of its address (HMAC-SHA256), the only trace of it once its contact is erased. */
export type AddressHash = (address: string) => Buffer;

/**
 * HMAC-SHA256 of the trimmed, lower-case address, keyed from LINK_SIGNING_SECRET (a key of its own derived from it, as
 * the return paths' tags are), so that a database dump alone cannot tell which addresses are suppressed by hashing
 * guesses. docs/decisions.md "Erasing a contact" says why this secret and what changing it costs.
 */
export function createAddressHash(secret: string): AddressHash {
  // A KeyObject made once: createHmac given the key's bytes makes one on every call, four times the cost of the hash.
  const key = createSecretKey(createHmac("sha256", secret).update("herald suppression address v1").digest());
  return (address) => createHmac("sha256", key).update(normaliseAddress(address)).digest();
}
