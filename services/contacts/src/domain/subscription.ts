import { contactSubscribed, contactUnsubscribed } from "./event-name.js";

/** Where a write comes from (ContactSource in the contract). */
export type ContactSource = "api" | "track" | "send" | "import";

/**
 * The state of a new contact when the caller did not say (SPEC.md "Contact
 * subscription"): /v1/send creates unsubscribed contacts, every other path
 * subscribed ones. An existing contact keeps its state when the caller did not say.
 */
export const defaultSubscribed = (source: ContactSource): boolean => source !== "send";

/**
 * The event a change of state emits. Only a change of an existing contact counts:
 * creating a contact emits nothing, since it had no state to change from.
 */
export const subscriptionEventName = (subscribed: boolean): string => (subscribed ? contactSubscribed : contactUnsubscribed);
