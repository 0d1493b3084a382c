import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { clientAddress, createTestGateway } from "./support/gateway.js";
import { restClient, type SignedInUser, signUp, uniqueEmail } from "./support/http.js";

const herald = inject("herald");
const call = restClient(herald.stack.gatewayUrl);

/**
 * A gateway of the test's own with two free failures per account and three per client
 * address, over the real identity service and Redis; each attempt comes from an address
 * of its own unless a test says otherwise.
 */
describe("sign-in backoff", () => {
  let gateway: Awaited<ReturnType<typeof createTestGateway>>;
  let user: SignedInUser;

  beforeAll(async () => {
    gateway = await createTestGateway({
      serviceUrls: herald.stack.serviceUrls,
      redisUrl: herald.redisUrl,
      env: {
        LOGIN_FREE_FAILURES_PER_ACCOUNT: "2",
        LOGIN_FREE_FAILURES_PER_IP: "3",
        LOGIN_BACKOFF_BASE_SECONDS: "60",
        LOGIN_BACKOFF_MAX_SECONDS: "900",
      },
    });
    user = await signUp(call, "backoff");
  });

  afterAll(async () => {
    await gateway?.close();
  });

  const logIn = (email: string, password: string, remoteAddress = clientAddress()) =>
    gateway.app.inject({ method: "POST", url: "/auth/login", remoteAddress, payload: { email, password } });

  /** Lets the current wait of an account end, as time would. */
  const endWait = (email: string) => gateway.redis.del(`herald:login:account:${createHash("sha256").update(email).digest("hex")}:wait`);

  it("makes an account wait after its free failures, twice as long after each further one", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await logIn(user.email, "wrong-password")).statusCode);
    expect(statuses).toEqual([401, 401, 401]);

    // Waiting: even the right password is refused, and nothing is hashed.
    const waiting = await logIn(user.email, user.password);
    expect(waiting.statusCode).toBe(429);
    expect(waiting.headers["content-type"]).toMatch(/^application\/json/);
    expect(waiting.json().error).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", statusCode: 429 });
    const first = Number(waiting.headers["retry-after"]);
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(60);

    await endWait(user.email);
    expect((await logIn(user.email, "wrong-again")).statusCode).toBe(401);
    const second = Number((await logIn(user.email, user.password)).headers["retry-after"]);
    expect(second).toBeGreaterThan(60);
    expect(second).toBeLessThanOrEqual(120);

    // Once the wait is over, the right password signs in and the count starts again.
    await endWait(user.email);
    expect((await logIn(user.email, user.password)).statusCode).toBe(200);
    expect((await logIn(user.email, "wrong-password")).statusCode).toBe(401);
    expect((await logIn(user.email, "wrong-password")).statusCode).toBe(401);
  });

  it("answers an address without an account exactly as one with an account", async () => {
    const nobody = uniqueEmail("nobody");
    const someone = (await signUp(call, "someone")).email;
    const answers = [];
    for (const email of [nobody, someone]) {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await logIn(email, "wrong-password")).statusCode);
      expect(statuses).toEqual([401, 401, 401]);
      const refused = await logIn(email, "wrong-password");
      // Everything but the request id and the seconds left (which the clock moves) must be equal.
      const { requestId: _requestId, details: _details, message, ...error } = refused.json().error;
      answers.push({ status: refused.statusCode, error, message: String(message).replace(/\d+/g, "N") });
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]?.status).toBe(429);
  });

  it("lets at most one of 50 parallel wrong passwords past the free failures reach the hash", async () => {
    const target = (await signUp(call, "parallel")).email;
    for (let i = 0; i < 2; i++) expect((await logIn(target, "wrong-password")).statusCode).toBe(401);
    // Each from an address of its own, so that only the account's backoff stands between them and the hash.
    const answers = await Promise.all(Array.from({ length: 50 }, () => logIn(target, `guess-${randomUUID()}`)));
    const statuses = answers.map((answer) => answer.statusCode);
    // A 401 INVALID_CREDENTIALS is an attempt that identity hashed; every other one was refused before it.
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(1);
    const refused = answers.filter((answer) => answer.statusCode === 429);
    expect(refused.length).toBeGreaterThanOrEqual(49);
    for (const answer of refused) expect(answer.json().error).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", statusCode: 429 });
  });

  it("makes a client address wait after its free failures, whatever accounts it tries", async () => {
    const attacker = clientAddress();
    for (let i = 0; i < 4; i++) expect((await logIn(uniqueEmail(`spray-${i}`), "guess", attacker)).statusCode).toBe(401);
    const refused = await logIn(user.email, `guess-${randomUUID()}`, attacker);
    expect(refused.statusCode).toBe(429);
    // The account itself is not held back for others.
    await endWait(user.email);
    expect((await logIn(user.email, user.password)).statusCode).toBe(200);
  });
});
