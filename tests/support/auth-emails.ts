import pg from "pg";

/** The newest email identity queued for an address (its dev outbox, until the delivery service sends them). */
export async function lastAuthEmail(databaseUrl: string, to: string, kind?: string): Promise<{ kind: string; text: string }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT kind, text FROM identity.auth_emails WHERE "to" = $1 AND ($2::text IS NULL OR kind::text = $2) ORDER BY created_at DESC LIMIT 1`,
      [to, kind ?? null],
    );
    if (!rows[0]) throw new Error(`no email queued for ${to}`);
    return rows[0];
  } finally {
    await client.end();
  }
}

export const tokenIn = (text: string) => /token=([A-Za-z0-9_-]+)/.exec(text)?.[1] ?? "";
