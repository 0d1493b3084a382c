import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The secrets a production deployment must set; `npm start` and the tests make their own once. */
export const localSecretNames = [
  "JWT_SECRET",
  "LINK_SIGNING_SECRET",
  "DKIM_ENCRYPTION_KEY",
  "INTERNAL_RPC_TOKEN",
  "SYSTEM_DKIM_PRIVATE_KEY",
] as const;
export type LocalSecrets = Record<(typeof localSecretNames)[number], string>;

const generators: Record<keyof LocalSecrets, () => string> = {
  JWT_SECRET: () => randomBytes(32).toString("base64url"),
  LINK_SIGNING_SECRET: () => randomBytes(32).toString("base64url"),
  // 32 bytes as 64 hex digits, as DKIM_ENCRYPTION_KEY reads it.
  DKIM_ENCRYPTION_KEY: () => randomBytes(32).toString("hex"),
  INTERNAL_RPC_TOKEN: () => randomBytes(32).toString("base64url"),
  // Signs account emails (delivery's SYSTEM_DKIM_*): RSA-2048 in PKCS#8 PEM, as a DKIM key is.
  SYSTEM_DKIM_PRIVATE_KEY: () =>
    generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
};

/**
 * This checkout's secrets, in `.herald/secrets.json` (git-ignored, readable by its owner only):
 * made on first use and kept, so that DKIM keys stored under them and signed links outlive a restart.
 * A secret missing from the file (one added since) is generated and saved with the rest.
 */
export function localSecrets(root: string): LocalSecrets {
  const dir = join(root, ".herald");
  const file = join(dir, "secrets.json");
  let stored: Partial<LocalSecrets> = {};
  try {
    stored = JSON.parse(readFileSync(file, "utf8")) as Partial<LocalSecrets>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  // Only what is missing is made: an RSA key takes a noticeable moment.
  const secrets = Object.fromEntries(localSecretNames.map((name) => [name, stored[name] || generators[name]()])) as LocalSecrets;
  if (localSecretNames.some((name) => stored[name] !== secrets[name])) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  }
  return secrets;
}
