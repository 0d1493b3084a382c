import { isId } from "./ids.js";
import { encodeCursor } from "./paging.js";

export type ContactSort = "createdAt" | "email";
export type SortDirection = "asc" | "desc";

/** GET /contacts: newest first unless told otherwise; unknown values fall back to these. */
export const defaultContactOrder = { sort: "createdAt", direction: "desc" } as const satisfies ContactOrder;

export interface ContactOrder {
  sort: ContactSort;
  direction: SortDirection;
}

/** Where a page ended: the sort value and id of its last contact (ids break ties), and the order it belongs to. */
export interface ContactPosition {
  sort: ContactSort;
  direction: SortDirection;
  /** The email, or createdAt as an ISO string. */
  value: string;
  id: string;
}

export const contactCursorOf = (position: ContactPosition): string => encodeCursor(position);

export function isContactPositionIn(order: ContactOrder) {
  return (value: unknown): value is ContactPosition => {
    if (typeof value !== "object" || value === null) return false;
    const position = value as Record<string, unknown>;
    return (
      position.sort === order.sort &&
      position.direction === order.direction &&
      typeof position.value === "string" &&
      typeof position.id === "string" &&
      isId(position.id) &&
      (order.sort === "email" || !Number.isNaN(Date.parse(position.value)))
    );
  };
}
