/** Prisma's P2002: a unique index refused the write, which callers turn into their own conflict. */
export const isUniqueViolation = (error: unknown): boolean =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === "P2002";
