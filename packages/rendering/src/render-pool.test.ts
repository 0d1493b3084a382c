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
    // Which limit stops the long render first (time or output size) depends on the machine's load: compare without it.
    const withoutMessage = (results: unknown[]) =>
      results.map((result) =>
        typeof result === "object" && result !== null && "problem" in result
          ? { problem: { ...(result.problem as object), message: "" } }
          : result,
      );
    expect(withoutMessage(each)).toEqual(
      withoutMessage(await inline.renderEach(repeated, [{ data: { n: 1 } }, { data: { n: 300_000 } }, { data: { n: 2 } }])),
    );
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

  it("fails only the task whose thread runs out of memory, and keeps rendering", async () => {
    // Two threads of 32 MB heap each.
    const small = createRenderPool(2, { heapMb: 32 });
    try {
      // A range within the Liquid budget (10,000,000 items) that needs 72 MB of array: more than the thread's heap.
      const hungry = { subject: "s", body: "{% for i in (1..9000000) %}{% endfor %}" };
      const many = Array.from({ length: 2_000 }, (_, n) => ({ data: { n } }));
      // The other task starts first, on the started thread; the hungry one starts a second thread and dies there.
      const others = small.renderEach({ subject: "Hi {{ n }}", body: "<p>{{ n }}</p>" }, many);
      const died = await small.render(hungry, [{}], 60_000);
      expect(died).toEqual({
        failed: {
          index: 0,
          problem: { part: "body", kind: "limit", message: expect.stringMatching(/ran out of memory/) },
          outOfTime: false,
        },
      });
      const rendered = await others;
      expect(rendered).toHaveLength(2_000);
      expect(rendered[1_999]).toEqual({ subject: "Hi 1999", body: "<p>1999</p>" });
      // Each way of rendering answers its own shape; the pool starts new threads and keeps rendering.
      expect(await small.renderEach(hungry, [{}, {}])).toEqual([
        { problem: expect.objectContaining({ kind: "limit" }) },
        { problem: expect.objectContaining({ kind: "limit" }) },
      ]);
      expect(await small.render(source, recipients, 10_000)).toEqual(await inline.render(source, recipients, 10_000));
    } finally {
      await small.close();
    }
    // Threads start and die slowly on a busy machine: a generous bound, not a timing.
  }, 240_000);
});
