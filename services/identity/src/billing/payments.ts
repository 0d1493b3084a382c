/** One invoice as the dashboard lists it. */
export interface InvoiceSummary {
  id: string;
  number: string;
  status: string;
  amountDue: bigint;
  currency: string;
  createdAt: Date;
  hostedInvoiceUrl: string;
}

/** The payment provider behind checkout, the billing portal and invoices. */
export interface Payments {
  /** A customer for the project; the same project id never makes two. */
  createCustomer(project: { id: string; name: string }): Promise<string>;
  createCheckoutSession(session: {
    customerId: string;
    projectId: string;
    priceId: string;
    successUrl: string;
    cancelUrl: string;
  }): Promise<string>;
  createPortalSession(session: { customerId: string; returnUrl: string }): Promise<string>;
  listInvoices(customerId: string): Promise<InvoiceSummary[]>;
}
