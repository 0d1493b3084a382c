/**
 * The part of a Prisma client (or transaction client) that the outbox and the
 * idempotent consumer use. Every service's generated client fits it, so this
 * package needs none of them.
 */
export interface SqlClient {
  $executeRaw(query: TemplateStringsArray, ...values: unknown[]): Promise<number>;
  $queryRaw<T = unknown>(query: TemplateStringsArray, ...values: unknown[]): Promise<T>;
}

export interface TransactionalClient<Tx extends SqlClient> {
  $transaction<R>(fn: (tx: Tx) => Promise<R>, options?: { maxWait?: number; timeout?: number }): Promise<R>;
}
