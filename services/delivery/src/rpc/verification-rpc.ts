import type { ServiceImpl } from "@connectrpc/connect";
import { MailExchange, Verdict, type VerificationService } from "@herald/proto/herald/delivery/v1/verification_service_pb";
import type { MailExchangeAnswer } from "../verification/mail-exchange.js";
import type { Verdict as VerdictName, Verification } from "../verification/verification.js";

const verdicts: Record<VerdictName, Verdict> = {
  deliverable: Verdict.DELIVERABLE,
  risky: Verdict.RISKY,
  undeliverable: Verdict.UNDELIVERABLE,
  unknown: Verdict.UNKNOWN,
};

const mailExchanges: Record<MailExchangeAnswer["kind"], MailExchange> = {
  mx: MailExchange.MX,
  implicit: MailExchange.IMPLICIT,
  "null-mx": MailExchange.NULL_MX,
  none: MailExchange.NONE,
  "no-domain": MailExchange.NO_DOMAIN,
  "dns-error": MailExchange.DNS_ERROR,
};

export function createVerificationRpc(deps: { verification: Verification }): ServiceImpl<typeof VerificationService> {
  return {
    async verifyEmail(request) {
      const result = await deps.verification.verify(request.projectId, request.email);
      return { ...result, verdict: verdicts[result.verdict], mailExchange: mailExchanges[result.mailExchange] };
    },
  };
}
