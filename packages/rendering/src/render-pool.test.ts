import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRenderPool, type RenderPool } from "./render-pool.js";

let inline: RenderPool;
let threaded: RenderPool;

beforeAll(() => {
  inline = createRenderPool(0);
  threaded = createRenderPool(1);
});

afterAll(async () => {
  await Promise.all([inline?.close(), threaded?.close()]);
});

const source = { subject: "Hi {{ first_name | default: 'there' }}", body: '<p>{{ plan }}</p><a href="{{ unsubscribeUrl }}">stop</a>' };
const recipients = [
  { data: { first_name: "Ada", plan: "pro" }, unsubscribeUrl: "https://h.example/unsubscribe/a" },
  { data: { plan: "<b>free</b>" }, unsubscribeUrl: "https://h.example/unsubscribe/b" },
];
/** Runs until a limit stops it. */
const endless = { subject: "Loop", body: "{% for a in (1..100000) %}{% for b in (1..100000) %}{% endfor %}{% endfor %}" };

describe("render pool", () => {
  it("renders each recipient in a thread as on the calling thread", async () => {
    const [own, other] = await Promise.all([inline.render(source, recipients, 1_000), threaded.render(source, recipients, 1_000)]);
    expect(other).toEqual(own);
    expect(other).toEqual({
      rendered: [
        { subject: "Hi Ada", body: '<p>pro</p><a href="https://h.example/unsubscribe/a">stop</a>' },
        { subject: "Hi there", body: '<p>&lt;b&gt;free&lt;/b&gt;</p><a href="https://h.example/unsubscribe/b">stop</a>' },
      ],
    });
  });

  it("answers every problem of a source, its lines included, from a thread", async () => {
    const problems = await threaded.validate({ subject: "{{ name", body: "<p>\n{% include 'x' %}</p>" });
    expect(problems).toEqual(await inline.validate({ subject: "{{ name", body: "<p>\n{% include 'x' %}</p>" }));
    expect(problems.map((problem) => [problem.part, problem.kind, problem.line])).toEqual([
      ["subject", "parse", 1],
      ["body", "parse", 2],
    ]);
    expect(await threaded.validate(source)).toEqual([]);
  });

  it("answers a recipient whose render fails by its index", async () => {
    // Output past the sandbox's 2,000,000 characters for the second recipient only.
    const repeated = { subject: "Hi", body: "{% for i in (1..n) %}0123456789{% endfor %}" };
    const outcome = await threaded.render(repeated, [{ data: { n: 10 } }, { data: { n: 300_000 } }], 1_000);
    expect(outcome).toEqual({ failed: { index: 1, problem: expect.objectContaining({ part: "body", kind: "limit" }), outOfTime: false } });
  });

  it("renders each recipient apart when there is no budget, a failure in its place", async () => {
    const repeated = { subject: "Hi {{ n }}", body: "{% for i in (1..n) %}0123456789{% endfor %}" };
    const each = await threaded.renderEach(repeated, [{ data: { n: 1 } }, { data: { n: 300_000 } }, { data: { n: 2 } }]);
    expect(each).toEqual(await inline.renderEach(repeated, [{ data: { n: 1 } }, { data: { n: 300_000 } }, { data: { n: 2 } }]));
    expect(each).toEqual([
      { subject: "Hi 1", body: "0123456789" },
      { problem: expect.objectContaining({ part: "body", kind: "limit" }) },
      { subject: "Hi 2", body: "01234567890123456789" },
    ]);
    // A source that does not parse fails every recipient with its problem.
    expect(await threaded.renderEach({ subject: "{{ x", body: "b" }, [{}, {}])).toEqual([
      { problem: expect.objectContaining({ part: "subject", kind: "parse" }) },
      { problem: expect.objectContaining({ part: "subject", kind: "parse" }) },
    ]);
  });

  it("renders short texts on one line each, a failure in its place", async () => {
    const texts = ["https://hooks.example/{{ data.plan }}", "Bearer {{ data.token }}", "{{ x", "line\n{{ data.plan }}"];
    const variables = { data: { plan: "pro", token: "t0k" } };
    const rendered = await threaded.renderTexts(texts, variables);
    expect(rendered).toEqual(await inline.renderTexts(texts, variables));
    expect(rendered).toEqual([
      "https://hooks.example/pro",
      "Bearer t0k",
      { problem: expect.objectContaining({ kind: "parse" }) },
      "line pro",
    ]);
  });

  it("stops the renders of all recipients together at the budget, and tells it from one render's own limit", async () => {
    const started = performance.now();
    const outcome = await threaded.render(
      endless,
      Array.from({ length: 50 }, () => ({})),
      300,
    );
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(outcome).toEqual({ failed: { index: 0, problem: expect.objectContaining({ kind: "limit" }), outOfTime: true } });
  });

  it("keeps the event loop free while a thread renders", async () => {
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 10);
    try {
      await threaded.render(endless, [{}], 500);
    } finally {
      clearInterval(ticking);
    }
    // On the calling thread the loop would not have turned once in those 500 ms.
    expect(ticks).toBeGreaterThan(5);
  });
});
