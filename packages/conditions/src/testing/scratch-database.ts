import { randomBytes } from "node:crypto";
import pg from "pg";
import { conditionSqlFunctions } from "../sql-functions.js";

/** The contacts service's tables that compiled conditions read, with the indexes README.md names. */
export const contactTables = `
CREATE TABLE contacts (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL,
  email text NOT NULL,
  subscribed boolean NOT NULL,
  snoozed_until timestamptz(3),
  data jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz(3) NOT NULL,
  updated_at timestamptz(3) NOT NULL
);
CREATE UNIQUE INDEX contacts_project_id_email_key ON contacts (project_id, email);
CREATE INDEX contacts_project_id_created_at_id_idx ON contacts (project_id, created_at, id);
CREATE INDEX contacts_data_path_idx ON contacts USING gin (data jsonb_path_ops);

CREATE TABLE events (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL,
  contact_id uuid NOT NULL,
  name text NOT NULL,
  data jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz(3) NOT NULL
);
CREATE INDEX events_project_id_name_created_at_id_idx ON events (project_id, name, created_at, id);
CREATE INDEX events_contact_id_created_at_id_idx ON events (contact_id, created_at, id);

CREATE TABLE segment_members (
  project_id uuid NOT NULL,
  segment_id uuid NOT NULL,
  contact_id uuid NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (segment_id, contact_id)
);
`;

export interface ScratchDatabase {
  client: pg.Client;
  drop(): Promise<void>;
}

function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  url.search = "";
  return url.toString();
}

/**
 * A database of its own on the server at `serverUrl`, holding the contact tables
 * and conditionSqlFunctions. Its default collation is ICU's en-US where the server
 * has ICU (as production databases often have a linguistic collation), so a text
 * comparison that depends on the collation shows.
 */
export async function createScratchDatabase(serverUrl: string): Promise<ScratchDatabase> {
  const name = `herald_conditions_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: withDatabase(serverUrl, "postgres") });
  await admin.connect();
  try {
    await admin
      .query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C.UTF-8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`)
      .catch(() => admin.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8'`));
  } finally {
    await admin.end();
  }
  const client = new pg.Client({ connectionString: withDatabase(serverUrl, name) });
  await client.connect();
  await client.query(contactTables);
  await client.query(conditionSqlFunctions);
  return {
    client,
    async drop() {
      await client.end();
      const dropper = new pg.Client({ connectionString: withDatabase(serverUrl, "postgres") });
      await dropper.connect();
      try {
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}
