/** The loopback address the tests' webhook receiver listens on: the only private one the stack's WEBHOOK steps may reach. */
export const webhookReceiverAddress = "127.0.0.2";
