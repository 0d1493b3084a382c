import { Code, ConnectError } from "@connectrpc/connect";
import { errorDetailOf } from "@herald/errors";

/** The failure of an RPC that must fail, checked for its gRPC code and its machine code. */
export async function expectFailure(call: Promise<unknown>, code: Code, detailCode: string): Promise<ConnectError> {
  const outcome = await call.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(outcome instanceof ConnectError)) {
    throw new Error(`expected ${Code[code]} ${detailCode}, got ${outcome === undefined ? "success" : String(outcome)}`);
  }
  const detail = errorDetailOf(outcome)?.code;
  if (outcome.code !== code || detail !== detailCode) {
    throw new Error(`expected ${Code[code]} ${detailCode}, got ${Code[outcome.code]} ${detail ?? "(no detail)"}: ${outcome.rawMessage}`);
  }
  return outcome;
}
