import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { DomainError } from "@herald/errors";
import { createLoadingCache } from "@herald/platform";
import type { ContactsService } from "@herald/proto/herald/contacts/v1/contacts_service_pb";
import type { Db } from "../db/client.js";
import { emailExists, findEmailFacts, findTrackingMode, recordEngagement, saveTrackingMode } from "../db/engagement.js";
import { requireProjectId } from "../domain/ids.js";
import { writeEmailActivity } from "../events/email-activity-outbox.js";
import type { LinkToken, LinkTokens } from "../links/link-tokens.js";
import type { TrackingMode } from "./html-tracking.js";

export type Tracking = ReturnType<typeof createTracking>;

export interface Recipient {
  email: string;
  subscribed: boolean;
}

/** How long a replica trusts its copy of a project's tracking mode; a change on another replica shows within this. */
const modeCacheMs = 30_000;

const linkNotFound = () => new DomainError("not-found", "LINK_NOT_FOUND", "This link is not valid");

/**
 * What the links of an email do when followed: opens and clicks are recorded on the email
 * (status moved forward, an email.open / email.click event written with it), and the
 * recipient's pages read and change the contact's subscription through the contacts
 * service; an unsubscribe through a link that names its email is recorded on that email
 * (email.unsubscribe, which counts for its campaign). And each project's tracking mode,
 * which decides whether an email gets links and a pixel at all.
 */
export function createTracking(deps: { db: Db; tokens: LinkTokens; contacts: Client<typeof ContactsService>; nudgeOutbox: () => void }) {
  const { db, tokens, contacts } = deps;
  const modes = createLoadingCache<string, TrackingMode>({
    max: 10_000,
    ttlMs: modeCacheMs,
    load: async (projectId) => (await findTrackingMode(db, requireProjectId(projectId))) ?? "enabled",
  });

  function read<Kind extends LinkToken["kind"]>(token: string, kind: Kind): Extract<LinkToken, { kind: Kind }> {
    const link = tokens.read(token);
    if (link?.kind !== kind) throw linkNotFound();
    return link as Extract<LinkToken, { kind: Kind }>;
  }

  /** Records an open or a click; false when the email does not exist (deleted since, or never sent). */
  async function engage(projectId: string, emailId: string, click: { url: string } | undefined): Promise<boolean> {
    const outcome = await db.$transaction(async (tx) => {
      const engagement = await recordEngagement(tx, projectId, emailId, click !== undefined);
      if (!engagement) return { found: false, written: false };
      if (engagement.firstOpen) await writeEmailActivity(tx, "email.open", engagement.email);
      if (click) await writeEmailActivity(tx, "email.click", engagement.email, { url: click.url });
      return { found: true, written: engagement.firstOpen || click !== undefined };
    });
    if (outcome.written) deps.nudgeOutbox();
    return outcome.found;
  }

  /** The contact behind a recipient link; LINK_NOT_FOUND when it was deleted since. */
  async function recipientOf(link: Extract<LinkToken, { kind: "recipient" }>, subscribed?: boolean): Promise<Recipient> {
    try {
      const { contact } =
        subscribed === undefined
          ? await contacts.getContact({ projectId: link.projectId, contactId: link.contactId })
          : await contacts.updateContact({ projectId: link.projectId, contactId: link.contactId, subscribed });
      if (!contact) throw linkNotFound();
      return { email: contact.email, subscribed: contact.subscribed };
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.NotFound) throw linkNotFound();
      throw error;
    }
  }

  /**
   * An unsubscribe the email's link made: email.unsubscribe on the email, when the contact was subscribed
   * until then (a repeated unsubscribe, or one of a contact already unsubscribed otherwise, records nothing).
   */
  async function unsubscribe(link: Extract<LinkToken, { kind: "recipient" }>): Promise<Recipient> {
    if (link.emailId === undefined) return recipientOf(link, false);
    const { emailId } = link;
    const before = await recipientOf(link);
    const after = await recipientOf(link, false);
    if (!before.subscribed || after.subscribed) return after;
    const written = await db.$transaction(async (tx) => {
      const email = await findEmailFacts(tx, link.projectId, emailId);
      if (!email) return false;
      await writeEmailActivity(tx, "email.unsubscribe", email);
      return true;
    });
    if (written) deps.nudgeOutbox();
    return after;
  }

  return {
    /** Never fails on a bad token: the pixel answers the same whatever it was given. */
    async recordOpen(token: string): Promise<void> {
      const link = tokens.read(token);
      if (link?.kind === "open") await engage(link.projectId, link.emailId, undefined);
    },

    /**
     * Where the click leads; the click is recorded on the way. LINK_NOT_FOUND for an email that does not exist:
     * a signed token alone must not make the gateway an open redirect.
     */
    async recordClick(token: string): Promise<string> {
      const link = read(token, "click");
      if (!(await engage(link.projectId, link.emailId, { url: link.url }))) throw linkNotFound();
      return link.url;
    },

    /** Where a click link leads, recording nothing (a HEAD request is safe: no click); LINK_NOT_FOUND as recordClick. */
    async resolveClick(token: string): Promise<string> {
      const link = read(token, "click");
      if (!(await emailExists(db, link.projectId, link.emailId))) throw linkNotFound();
      return link.url;
    },

    getRecipient: (token: string): Promise<Recipient> => recipientOf(read(token, "recipient")),

    setSubscription: (token: string, subscribed: boolean): Promise<Recipient> =>
      subscribed ? recipientOf(read(token, "recipient"), true) : unsubscribe(read(token, "recipient")),

    modeOf: (projectId: string): Promise<TrackingMode> => modes.get(projectId),

    async setMode(projectId: string, mode: TrackingMode): Promise<TrackingMode> {
      await saveTrackingMode(db, requireProjectId(projectId), mode);
      modes.set(projectId, mode);
      return mode;
    },
  };
}
