/** The campaign counter each email-activity type moves; opens and clicks count once per email. */
export const counterColumns = {
  "email.sent": "sent_count",
  "email.delivery": "delivered_count",
  "email.open": "opened_count",
  "email.click": "clicked_count",
  "email.bounce": "bounced_count",
  "email.complaint": "complained_count",
  "email.unsubscribe": "unsubscribed_count",
} as const;

export type CounterType = keyof typeof counterColumns;
export type CounterColumn = (typeof counterColumns)[CounterType];

/** Counted once per email however often it happens. */
export const firstOnly = new Set<CounterColumn>(["opened_count", "clicked_count", "unsubscribed_count", "complained_count"]);

export const counterOf = (type: string): CounterColumn | undefined =>
  Object.hasOwn(counterColumns, type) ? counterColumns[type as CounterType] : undefined;
