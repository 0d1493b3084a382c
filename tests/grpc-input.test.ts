import { randomUUID } from "node:crypto";
import { Code, createClient } from "@connectrpc/connect";
import { createRpcTransport, defaultReadMaxBytes } from "@herald/platform";
import { ContactsService } from "@herald/proto/herald/contacts/v1/contacts_service_pb";
import { ContactSource } from "@herald/proto/herald/contacts/v1/resources_pb";
import { EmailsService } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { expectFailure } from "@herald/testing";
import { describe, expect, inject, it } from "vitest";

const { stack } = inject("herald");
const contacts = createClient(ContactsService, createRpcTransport({ baseUrl: stack.serviceUrls.contacts, timeoutMs: 10_000 }));
const emails = createClient(EmailsService, createRpcTransport({ baseUrl: stack.serviceUrls.delivery, timeoutMs: 10_000 }));

// The gateway refuses a NUL character in any REST request; internal services calling the gRPC services
// directly get InvalidArgument from the services themselves, not Internal.
describe("a NUL character from a direct gRPC caller", () => {
  it("is InvalidArgument INVALID_CHARACTER in contact data (jsonb)", async () => {
    const email = `nul-${randomUUID().slice(0, 8)}@example.com`;
    await expectFailure(
      contacts.upsertContact({ projectId: randomUUID(), email, source: ContactSource.API, data: { note: "a\0b" } }),
      Code.InvalidArgument,
      "INVALID_CHARACTER",
    );
  });

  it("is InvalidArgument INVALID_CHARACTER in an enqueued email's HTML (text)", async () => {
    await expectFailure(
      emails.enqueueEmail({
        projectId: randomUUID(),
        to: { email: "ada@example.com", name: "" },
        from: { email: "news@example.com", name: "" },
        subject: "Hello",
        html: "<p>a\0b</p>",
      }),
      Code.InvalidArgument,
      "INVALID_CHARACTER",
    );
  });
});

describe("a request message larger than the server's readMaxBytes", () => {
  it("is refused as ResourceExhausted before it reaches a handler", async () => {
    const email = `big-${randomUUID().slice(0, 8)}@example.com`;
    const call = contacts.upsertContact({
      projectId: randomUUID(),
      email,
      source: ContactSource.API,
      data: { note: "x".repeat(defaultReadMaxBytes) },
    });
    await expect(call).rejects.toMatchObject({ code: Code.ResourceExhausted });
  });
});
