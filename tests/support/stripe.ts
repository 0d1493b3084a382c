/** The shared stack's STRIPE_WEBHOOK_SECRET: tests sign the events they post with it. */
export const testStripeWebhookSecret = "whsec_herald_tests_only_not_a_secret";

/** The shared stack's STRIPE_PRICE_LIMITS. */
export const testStripePrices = {
  price_herald_starter: { transactional: 1000, campaigns: 5000, workflows: 2000, inbound: 100 },
  price_herald_growth: { transactional: 50000, campaigns: null, workflows: 100000 },
} as const;
