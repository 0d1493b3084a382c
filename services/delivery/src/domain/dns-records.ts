/** What a check found for one record, and what it concluded. */
export type RecordStatus = "pending" | "verified" | "failed";

export type RecordPurpose = "dkim" | "spf" | "dmarc";

export interface DnsRecord {
  purpose: RecordPurpose;
  type: "TXT";
  name: string;
  value: string;
  required: boolean;
}

export interface DomainKeyFacts {
  domain: string;
  selector: string;
  /** Base64 DER SPKI. */
  publicKey: string;
}

export const dkimRecordName = (domain: string, selector: string) => `${selector}._domainkey.${domain}`;

export const dkimRecordValue = (publicKey: string) => `v=DKIM1; k=rsa; p=${publicKey}`;

/** The records a user publishes for a domain: DKIM (required for verification), SPF and DMARC (recommended). */
export function expectedRecords(facts: DomainKeyFacts, options: { spfInclude?: string } = {}): DnsRecord[] {
  const spfMechanisms = options.spfInclude ? `include:${options.spfInclude}` : "a mx";
  return [
    {
      purpose: "dkim",
      type: "TXT",
      name: dkimRecordName(facts.domain, facts.selector),
      value: dkimRecordValue(facts.publicKey),
      required: true,
    },
    { purpose: "spf", type: "TXT", name: facts.domain, value: `v=spf1 ${spfMechanisms} ~all`, required: false },
    { purpose: "dmarc", type: "TXT", name: `_dmarc.${facts.domain}`, value: "v=DMARC1; p=none;", required: false },
  ];
}

/** A TXT lookup: the records found (each one's strings joined), none at all, or no answer. */
export type TxtAnswer = { kind: "records"; records: string[] } | { kind: "none" } | { kind: "error"; code: string };

/** undefined when the lookup gave no answer: the record keeps the status it had. */
export function recordStatusOf(record: DnsRecord, answer: TxtAnswer, options: { spfInclude?: string } = {}): RecordStatus | undefined {
  if (answer.kind === "error") return undefined;
  const records = answer.kind === "records" ? answer.records.map((text) => text.trim()) : [];
  switch (record.purpose) {
    case "dkim": {
      if (records.includes(record.value)) return "verified";
      return records.some((text) => /^v=DKIM1\b/i.test(text)) ? "failed" : "pending";
    }
    case "spf": {
      const spf = records.filter((text) => /^v=spf1(\s|$)/i.test(text));
      if (spf.length === 0) return "pending";
      // More than one SPF record is a permanent error for receivers (RFC 7208 4.5).
      if (spf.length > 1) return "failed";
      const include = options.spfInclude?.toLowerCase();
      return include === undefined || (spf[0] ?? "").toLowerCase().split(/\s+/).includes(`include:${include}`) ? "verified" : "failed";
    }
    case "dmarc": {
      const dmarc = records.filter((text) => /^v=DMARC1\s*(;|$)/i.test(text));
      if (dmarc.length === 0) return "pending";
      return dmarc.length === 1 ? "verified" : "failed";
    }
  }
}
