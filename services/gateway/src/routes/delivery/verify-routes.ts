import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { MailExchange, Verdict } from "@herald/proto/herald/delivery/v1/verification_service_pb";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import type { Upstreams } from "../../upstreams.js";

const verdicts = {
  [Verdict.UNSPECIFIED]: "unknown",
  [Verdict.DELIVERABLE]: "deliverable",
  [Verdict.RISKY]: "risky",
  [Verdict.UNDELIVERABLE]: "undeliverable",
  [Verdict.UNKNOWN]: "unknown",
} as const satisfies Record<Verdict, string>;

const mailExchanges = {
  [MailExchange.UNSPECIFIED]: "dns_error",
  [MailExchange.MX]: "mx",
  [MailExchange.IMPLICIT]: "implicit",
  [MailExchange.NULL_MX]: "null_mx",
  [MailExchange.NONE]: "none",
  [MailExchange.NO_DOMAIN]: "no_domain",
  [MailExchange.DNS_ERROR]: "dns_error",
} as const satisfies Record<MailExchange, string>;

const VerifyBody = Type.Object({ email: Type.String({ minLength: 1, maxLength: 254 }) });

const VerifyAnswer = Type.Object({
  success: Type.Boolean(),
  data: Type.Object({
    // SPEC.md's fields first.
    email: Type.String(),
    valid: Type.Boolean(),
    isDisposable: Type.Boolean(),
    isAlias: Type.Boolean(),
    isTypo: Type.Boolean(),
    isPlusAddressed: Type.Boolean(),
    isPersonalEmail: Type.Boolean(),
    domainExists: Type.Boolean(),
    hasWebsite: Type.Boolean(),
    hasMxRecords: Type.Boolean(),
    reasons: Type.Array(Type.String(), {
      description:
        "Stable codes: domain_not_found, no_mail_server, null_mx, special_use_domain, dns_error, suppressed, disposable, role_address, possible_typo",
    }),
    // Herald's own, beside them.
    suggestion: Type.Union([Type.String(), Type.Null()], { description: "The address with its domain's likely spelling when isTypo" }),
    domain: Type.String(),
    result: Type.Union([Type.Literal("deliverable"), Type.Literal("risky"), Type.Literal("undeliverable"), Type.Literal("unknown")]),
    mailExchange: Type.String(),
    mailServers: Type.Array(Type.String()),
    disposable: Type.Boolean(),
    roleAddress: Type.Boolean(),
    suppressed: Type.Boolean(),
  }),
});

export function registerVerifyRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { verification } = deps.upstreams;

  api.post(
    "/v1/verify",
    {
      config: { auth: "secret" },
      schema: {
        tags: ["Send"],
        summary:
          "What can be known about an address without sending to it: its domain's DNS, throwaway and free providers, typos, sub-addresses and aliases, role mailboxes, suppression (secret key)",
        security: [{ secretKey: [] }],
        body: VerifyBody,
        response: { 200: VerifyAnswer },
      },
    },
    async (request) => {
      const answer = await verification.verifyEmail({ projectId: projectOf(request), email: request.body.email });
      const result = verdicts[answer.verdict];
      return {
        success: true,
        data: {
          email: answer.email,
          // Mail to the address would be accepted, as far as can be known without sending.
          valid: result === "deliverable" || result === "risky",
          isDisposable: answer.disposable,
          isAlias: answer.isAlias,
          isTypo: answer.isTypo,
          isPlusAddressed: answer.isPlusAddressed,
          isPersonalEmail: answer.isPersonalEmail,
          domainExists: answer.domainExists,
          hasWebsite: answer.hasWebsite,
          hasMxRecords: answer.hasMxRecords,
          reasons: answer.reasons,
          suggestion: answer.suggestion ?? null,
          domain: answer.domain,
          result,
          mailExchange: mailExchanges[answer.mailExchange],
          mailServers: answer.mailServers,
          disposable: answer.disposable,
          roleAddress: answer.roleAddress,
          suppressed: answer.suppressed,
        },
      };
    },
  );
}
