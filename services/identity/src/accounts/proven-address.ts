import type { Tx } from "../db/client.js";
import { acceptInvitations } from "../db/members.js";
import { markEmailVerified, type User } from "../db/users.js";

/**
 * The user proved the address (verification link, reset link, or a provider's
 * verified email): mark it verified, and turn any invitations still waiting for
 * the address into memberships.
 */
export async function recordProvenAddress(tx: Tx, userId: string, now: Date): Promise<User> {
  const user = await markEmailVerified(tx, userId, now);
  await acceptInvitations(tx, user);
  return user;
}
