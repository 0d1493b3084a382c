import type { Reader, Tx } from "./client.js";
import type { User } from "./generated/client.js";

export type { User };

export const findUserByEmail = (db: Reader, email: string): Promise<User | null> => db.user.findUnique({ where: { email } });

export const findUserById = (db: Reader, id: string): Promise<User | null> => db.user.findUnique({ where: { id } });

export function createUser(
  tx: Tx,
  user: { email: string; name: string; passwordHash: string | null; emailVerifiedAt: Date | null },
): Promise<User> {
  return tx.user.create({ data: user });
}

export const setPasswordHash = (tx: Reader, userId: string, passwordHash: string | null): Promise<User> =>
  tx.user.update({ where: { id: userId }, data: { passwordHash } });

/** Marks the address proven, keeping the first time it was. */
export async function markEmailVerified(tx: Tx, userId: string, at: Date): Promise<User> {
  await tx.user.updateMany({ where: { id: userId, emailVerifiedAt: null }, data: { emailVerifiedAt: at } });
  return tx.user.findUniqueOrThrow({ where: { id: userId } });
}
