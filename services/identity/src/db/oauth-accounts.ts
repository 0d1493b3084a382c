import type { Reader, Tx } from "./client.js";
import type { User } from "./generated/client.js";

export async function findUserByOAuthAccount(db: Reader, provider: string, providerAccountId: string): Promise<User | undefined> {
  const account = await db.oAuthAccount.findUnique({
    where: { provider_providerAccountId: { provider, providerAccountId } },
    include: { user: true },
  });
  return account?.user;
}

export async function linkOAuthAccount(tx: Tx, link: { provider: string; providerAccountId: string; userId: string }): Promise<void> {
  await tx.oAuthAccount.upsert({
    where: { provider_providerAccountId: { provider: link.provider, providerAccountId: link.providerAccountId } },
    create: link,
    update: {},
  });
}
