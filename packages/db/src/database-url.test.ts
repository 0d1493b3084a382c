import { describe, expect, it } from "vitest";
import { poolConfigOf } from "./database-url.js";

describe("poolConfigOf", () => {
  it("names each connection after its schema's service, so that pg_stat_activity says whose statements they are", () => {
    expect(poolConfigOf("postgresql://app@db.internal:6432/herald", "delivery").application_name).toBe("herald-delivery");
  });

  it("keeps an application name the operator gave in the URL", () => {
    expect(poolConfigOf("postgresql://app@db.internal/herald?application_name=mail-eu", "delivery").application_name).toBe("mail-eu");
  });

  it("puts the schema first on the search path, with the settings asked for", () => {
    const config = poolConfigOf("postgresql://app:s%40cret@db.internal:6432/herald", "contacts", 4, { enable_seqscan: "off" });
    expect(config).toMatchObject({ host: "db.internal", port: 6432, user: "app", password: "s@cret", database: "herald", max: 4 });
    expect(config.options).toBe('-c search_path="contacts" -c jit=off -c enable_seqscan=off');
  });

  it("turns JIT compilation off, unless a caller asks for it", () => {
    expect(poolConfigOf("postgresql://db.internal/herald", "contacts").options).toBe('-c search_path="contacts" -c jit=off');
    expect(poolConfigOf("postgresql://db.internal/herald", "contacts", 4, { jit: "on" }).options).toBe(
      '-c search_path="contacts" -c jit=on',
    );
  });
});
