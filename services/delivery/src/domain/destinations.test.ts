import { describe, expect, it } from "vitest";
import { SendFailure } from "../providers/mail-provider.js";
import {
  defaultDestinationTable,
  destinationBackoffMs,
  destinationOf,
  destinationOverridesSchema,
  destinationTableOf,
  isDestinationDeferral,
} from "./destinations.js";

describe("destinations", () => {
  it("groups a recipient domain by its MX hosts, or makes its first MX host (or the domain) its own destination", () => {
    expect(destinationOf(defaultDestinationTable, "gmail.com", ["gmail-smtp-in.l.google.com."]).name).toBe("google");
    expect(destinationOf(defaultDestinationTable, "example.co", ["ASPMX.L.GOOGLE.COM", "alt1.aspmx.l.google.com"]).name).toBe("google");
    expect(destinationOf(defaultDestinationTable, "hotmail.com", ["hotmail-com.olc.protection.outlook.com"]).name).toBe("microsoft");
    expect(destinationOf(defaultDestinationTable, "yahoo.com", ["mta5.am0.yahoodns.net"]).name).toBe("yahoo");
    const own = destinationOf(defaultDestinationTable, "shop.example", ["mx1.shop.example", "mx2.shop.example"]);
    expect(own).toEqual({ name: "mx1.shop.example", limits: defaultDestinationTable.default });
    expect(destinationOf(defaultDestinationTable, "Nomx.Example", []).name).toBe("nomx.example");
    // A pattern `*.google.com` is a host under google.com, not one whose name merely ends alike.
    expect(destinationOf(defaultDestinationTable, "x.example", ["mx.notgoogle.com"]).name).toBe("mx.notgoogle.com");
  });

  it("lays SEND_DESTINATIONS over the default table: a group replaced, added or removed, and the default's limits", () => {
    const overrides = destinationOverridesSchema.parse({
      google: { mx: ["*.google.com"], concurrency: 5, ratePerSecond: 7 },
      corporate: { mx: ["mx.corp.example"], concurrency: 2, ratePerSecond: 1 },
      gmx: null,
      default: { concurrency: 3, ratePerSecond: 4 },
    });
    const table = destinationTableOf(overrides);
    expect(table.groups.google).toEqual({ mx: ["*.google.com"], concurrency: 5, ratePerSecond: 7 });
    expect(table.groups.corporate?.mx).toEqual(["mx.corp.example"]);
    expect(table.groups.gmx).toBeUndefined();
    expect(table.groups.microsoft).toEqual(defaultDestinationTable.groups.microsoft);
    expect(table.default).toEqual({ concurrency: 3, ratePerSecond: 4 });
    expect(destinationOf(table, "corp.example", ["mx.corp.example"]).name).toBe("corporate");
  });

  it("refuses a malformed table with the entry at fault", () => {
    const issues = (value: unknown) => destinationOverridesSchema.safeParse(value).error?.issues.map((issue) => issue.path.join("."));
    expect(issues({ google: { mx: [], concurrency: 1, ratePerSecond: 1 } })).toEqual(["google.mx"]);
    expect(issues({ google: { mx: ["*.google.com"], concurrency: 0, ratePerSecond: 1 } })).toEqual(["google.concurrency"]);
    expect(issues({ google: { mx: ["http://x"], concurrency: 1, ratePerSecond: 1 } })).toEqual(["google.mx.0"]);
    expect(issues({ "Not A Name": { mx: ["mx.example"], concurrency: 1, ratePerSecond: 1 } })).toEqual(["Not A Name"]);
    expect(issues({ default: { mx: ["mx.example"], concurrency: 1, ratePerSecond: 1 } })).toEqual(["default"]);
    expect(issues([1])).toBeDefined();
  });

  it("backs a destination off for 421, 450 and 451 replies only, doubling up to 16 times the first wait", () => {
    const rejected = (code: number) =>
      new SendFailure("refused", { kind: code >= 500 ? "permanent" : "temporary", reason: "rejected", responseCode: code });
    expect([421, 450, 451].map((code) => isDestinationDeferral(rejected(code)))).toEqual([true, true, true]);
    expect([452, 550, 554].map((code) => isDestinationDeferral(rejected(code)))).toEqual([false, false, false]);
    expect(isDestinationDeferral(new SendFailure("connection lost", { kind: "temporary", reason: "connection" }))).toBe(false);
    expect(isDestinationDeferral(new Error("421"))).toBe(false);
    expect([1, 2, 3, 5, 9].map((consecutive) => destinationBackoffMs(1_000, consecutive))).toEqual([1_000, 2_000, 4_000, 16_000, 16_000]);
  });
});
