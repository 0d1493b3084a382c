import { describe, expect, inject, it } from "vitest";
import { createProject, restClient, signUp } from "./support/http.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

describe("the per-project rate limit", () => {
  it("answers the 1,001st request of a minute with 429, the envelope and the RateLimit headers", async () => {
    const owner = await signUp(call, "busy");
    const project = await createProject(call, owner.cookie, "Busy");
    const path = `/projects/${project.id}/setup-state`;

    const first = await call("GET", path, { key: project.secretKey });
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-limit")).toBe("1000");
    expect(first.headers.get("ratelimit-remaining")).toBe("999");
    expect(Number(first.headers.get("ratelimit-reset"))).toBeGreaterThan(0);

    const statuses: number[] = [];
    for (let batch = 0; batch < 999 / 37; batch++) {
      const size = Math.min(37, 999 - batch * 37);
      const answers = await Promise.all(Array.from({ length: size }, () => call("GET", path, { key: project.secretKey })));
      statuses.push(...answers.map((answer) => answer.status));
    }
    expect(statuses).toHaveLength(999);
    expect(statuses.every((status) => status === 200)).toBe(true);

    const over = await call<{ success: boolean; error: { code: string; statusCode: number } }>("GET", path, { key: project.secretKey });
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ success: false, error: { code: "RATE_LIMIT_EXCEEDED", statusCode: 429 } });
    expect(over.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);

    // Another project's budget is its own.
    const neighbour = await createProject(call, owner.cookie, "Neighbour");
    expect((await call("GET", `/projects/${neighbour.id}/setup-state`, { key: neighbour.secretKey })).status).toBe(200);
  }, 120_000);
});
