import { describe, expect, it } from "vitest";
import { createRenderer, parseTemplate, renderTemplate, validateTemplate } from "./renderer.js";
import { TemplateError, type TemplateProblem } from "./template-error.js";
import type { RenderVariables } from "./variables.js";

const body = (text: string, variables: RenderVariables = {}) => renderTemplate({ subject: "s", body: text }, variables).body;
const subject = (text: string, variables: RenderVariables = {}) => renderTemplate({ subject: text, body: "b" }, variables).subject;

function problemOf(action: () => unknown): TemplateProblem {
  try {
    action();
  } catch (error) {
    if (error instanceof TemplateError) return error.problem;
    throw error;
  }
  throw new Error("expected a TemplateError");
}

describe("SPEC.md rendering rules", () => {
  it("{{field}} inserts the data value; a missing one renders empty", () => {
    expect(body("Hi {{name}}!", { data: { name: "Ada" } })).toBe("Hi Ada!");
    expect(body("Hi {{ name }}, you have {{count}} items", { data: { name: "Ada", count: 3 } })).toBe("Hi Ada, you have 3 items");
    expect(body("Hi {{name}}!", { data: {} })).toBe("Hi !");
    expect(body("{{flag}} {{ratio}}", { data: { flag: false, ratio: 0.5 } })).toBe("false 0.5");
  });

  it('{{field ?? "fallback"}} uses the fallback only when the field is missing or null', () => {
    const template = 'Hi {{name ?? "there"}}';
    expect(body(template, { data: {} })).toBe("Hi there");
    expect(body(template, { data: { name: null } })).toBe("Hi there");
    expect(body(template, { data: { name: "Ada" } })).toBe("Hi Ada");
    // Unlike Liquid's default filter, empty, false and 0 are values.
    expect(body(template, { data: { name: "" } })).toBe("Hi ");
    expect(body("{{flag ?? true}} {{n ?? 7}}", { data: { flag: false, n: 0 } })).toBe("false 0");
  });

  it("?? chains left to right, takes variables and numbers, and applies before the filters", () => {
    expect(body('{{nickname ?? name ?? "friend"}}', { data: { name: "Ada" } })).toBe("Ada");
    expect(body('{{nickname ?? name ?? "friend"}}', { data: {} })).toBe("friend");
    expect(body("{{ missing ?? 42 }}", {})).toBe("42");
    expect(body('{{ name ?? "friend" | upcase }}', { data: {} })).toBe("FRIEND");
    expect(body('{{ name ?? "friend" | upcase }}', { data: { name: "ada" } })).toBe("ADA");
    expect(body('{{-  name ?? "x" -}} !', { data: {} })).toBe("x!");
    expect(body("{{profile.tier ?? 'free'}}", { data: { profile: {} } })).toBe("free");
  });

  it("?? inside strings, text, raw and comment blocks is left alone; quotes inside fallbacks survive", () => {
    expect(body('{{ "what??" }} Really??', {})).toBe("what?? Really??");
    expect(body("{{ q ?? 'Who?? me' }}", {})).toBe("Who?? me");
    expect(body(`{{ q ?? "it's \\"quoted\\"" | raw }}`, {})).toBe(`it's "quoted"`);
    expect(body(`{{ q ?? "a\\"?? b" | raw }}`, {})).toBe(`a"?? b`);
    expect(body(`{{ q ?? "it's" | raw }}`, {})).toBe("it's");
    expect(body(`{{ q ?? 'say "hi"' | raw }}`, {})).toBe('say "hi"');
    expect(body("{% raw %}{{ a ?? b }}{% endraw %}", {})).toBe("{{ a ?? b }}");
    expect(body("{% comment %}{{ a ?? }}{% endcomment %}ok", {})).toBe("ok");
    expect(body('{% assign s = "{{ a ?? b }}" %}{{ s | raw }}', {})).toBe("{{ a ?? b }}");
    expect(body('{{ x ?? "a}}b" }}', {})).toBe("a}}b");
  });

  it("refuses a ?? with nothing on one side, or after a filter, naming the line", () => {
    expect(problemOf(() => parseTemplate({ subject: "s", body: "one\n{{ ?? 'x' }}" }))).toMatchObject({
      part: "body",
      kind: "parse",
      line: 2,
      message: "?? needs a value on both sides",
    });
    expect(problemOf(() => parseTemplate({ subject: "{{ a ?? }}", body: "b" }))).toMatchObject({ part: "subject", line: 1 });
    expect(problemOf(() => parseTemplate({ subject: "s", body: "\n\n{{ a | upcase ?? 'x' }}" }))).toMatchObject({
      line: 3,
      message: "?? must come right after the value, before any filter",
    });
  });

  it("{{profile.tier}} reads nested data, and brackets index objects and arrays", () => {
    const data = { profile: { tier: "gold", address: { city: "Oslo" } }, tags: ["a", "b"] };
    expect(body("{{profile.tier}} {{ profile.address.city }} {{ profile['tier'] }} {{ tags[1] }} {{ tags.first }}", { data })).toBe(
      "gold Oslo gold b a",
    );
    expect(body("[{{profile.missing.deeper}}]", { data })).toBe("[]");
  });

  it('{{first name}} and {{data["first name"] | capitalize}} read keys with spaces', () => {
    const data = { "first name": "ada", "last name": "lovelace" };
    expect(body("{{first name}} {{ last name }}", { data })).toBe("ada lovelace");
    expect(body('{{data["first name"] | capitalize}}', { data })).toBe("Ada");
    expect(body("{{ first name | upcase }}", { data })).toBe("ADA");
    expect(body('{{ nick name ?? first name ?? "friend" }}', { data })).toBe("ada");
    expect(body('{{ nick name ?? "friend" }}', { data: {} })).toBe("friend");
    expect(body("{{ prénom du client }}", { data: { "prénom du client": "Zoé" } })).toBe("Zoé");
    // data is the whole data object, whatever the contact stores under "data".
    expect(body("{{ data.plan }}", { data: { plan: "pro", data: "stored" } })).toBe("pro");
  });

  it("Liquid tags and filters work with custom fields", () => {
    const data = { plan: "pro", items: ["x", "y", "z"], score: 7, signup: "2024-03-05T10:00:00Z" };
    expect(body("{% if plan == 'pro' %}Pro{% else %}Free{% endif %}", { data })).toBe("Pro");
    expect(body("{% unless missing %}none{% endunless %}", { data })).toBe("none");
    expect(
      body("{% for item in items %}{{ forloop.index }}{{ item }}{% unless forloop.last %},{% endunless %}{% endfor %}", { data }),
    ).toBe("1x,2y,3z");
    expect(body("{% case score %}{% when 7 %}seven{% endcase %}", { data })).toBe("seven");
    expect(body("{{ score | plus: 3 | times: 2 }} {{ items | join: '-' }} {{ plan | size }}", { data })).toBe("20 x-y-z 3");
    expect(body("{% assign total = score | plus: 1 %}{{ total }}", { data })).toBe("8");
    expect(body("{{ signup | date: '%Y-%m-%d %H:%M' }}", { data })).toBe("2024-03-05 10:00");
    expect(body("{% if plan contains 'pr' and score > 5 %}yes{% endif %}", { data })).toBe("yes");
  });

  it("unsubscribeUrl, subscribeUrl, manageUrl and the contact's id and email come from the caller; data cannot override them", () => {
    const variables: RenderVariables = {
      data: {
        unsubscribeUrl: "https://evil.example/u",
        subscribeUrl: "https://evil.example/s",
        manageUrl: "https://evil.example/m",
        email: "evil@example.com",
        id: "evil",
        herald_id: "evil",
        herald_email: "evil@example.com",
      },
      contact: { id: "c-1", email: "ada@example.com" },
      unsubscribeUrl: "https://mail.example/u/tok",
      subscribeUrl: "https://mail.example/s/tok",
      manageUrl: "https://mail.example/m/tok",
    };
    expect(body("{{unsubscribeUrl}}|{{subscribeUrl}}|{{manageUrl}}", variables)).toBe(
      "https://mail.example/u/tok|https://mail.example/s/tok|https://mail.example/m/tok",
    );
    expect(body("{{id}} {{email}} {{herald_id}} {{herald_email}}", variables)).toBe("c-1 ada@example.com c-1 ada@example.com");
    expect(body("{{ data.unsubscribeUrl }}", variables)).toBe("");
    // Without the caller's value the name is empty, never the data's.
    expect(body("[{{unsubscribeUrl}}]", { data: { unsubscribeUrl: "https://evil.example/u" } })).toBe("[]");
  });

  it("locale is a data key like any other; the caller's locale is used only when data has none", () => {
    expect(body("{{locale}}", { data: { locale: "fr" }, locale: "en" })).toBe("fr");
    expect(body("{{locale}}", { data: {}, locale: "en" })).toBe("en");
    expect(body("{% if locale == 'de' %}Hallo{% else %}Hello{% endif %}", { data: { locale: "de" } })).toBe("Hallo");
  });
});

describe("escaping", () => {
  it("escapes inserted values in the body; | raw opts out; the template's own HTML is untouched", () => {
    const data = { name: `<script>alert("x")</script> & 'co'`, html: "<b>bold</b>" };
    expect(body("<p>{{name}}</p>", { data })).toBe("<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;</p>");
    expect(body("{{ html | raw }}", { data })).toBe("<b>bold</b>");
    expect(body('{{ missing ?? "<i>x</i>" | raw }}', { data })).toBe("<i>x</i>");
    expect(body('<a href="{{unsubscribeUrl}}">', { unsubscribeUrl: "https://x.example/u?a=1&b=2" })).toBe(
      '<a href="https://x.example/u?a=1&amp;b=2">',
    );
  });

  it("does not escape twice when the template escapes itself", () => {
    expect(body("{{ name | escape }}", { data: { name: "a&b" } })).toBe("a&amp;b");
    expect(body("{{ name | escape_once }}", { data: { name: "a&amp;b" } })).toBe("a&amp;b");
  });

  it("never escapes the subject, and keeps it on one line", () => {
    expect(subject("{{ name }} & co", { data: { name: "Tom & <Jerry>" } })).toBe("Tom & <Jerry> & co");
    expect(subject("Hi {{ name }}!", { data: { name: "Ada\r\nBcc: x@example.com" } })).toBe("Hi Ada Bcc: x@example.com!");
  });
});

describe("sandbox", () => {
  it.each(["{% include 'header' %}", "{% render 'footer' %}", "{% layout 'base' %}{% block x %}{% endblock %}", "{% include name %}"])(
    "refuses %s when parsed, with its line",
    (tag) => {
      const problem = problemOf(() => parseTemplate({ subject: "s", body: `line one\n${tag}` }));
      expect(problem).toMatchObject({ part: "body", kind: "parse", line: 2 });
      expect(problem.message).toMatch(/tag is not allowed/);
    },
  );

  it("refuses them inside a liquid tag too", () => {
    expect(problemOf(() => parseTemplate({ subject: "s", body: "{% liquid\n  assign x = 1\n  include 'x'\n%}" }))).toMatchObject({
      kind: "parse",
      message: expect.stringMatching(/include tag is not allowed/),
    });
  });

  it("does not reach prototypes or constructors", () => {
    expect(
      body("[{{ name.constructor }}][{{ data.__proto__ }}][{{ data.hasOwnProperty }}][{{ data.constructor.name }}]", {
        data: { name: "ada" },
      }),
    ).toBe("[][][][]");
    expect(body("[{{ __proto__.x }}]", { data: JSON.parse('{"__proto__": {"x": "own"}}') })).toBe("[own]");
    expect(Object.prototype).not.toHaveProperty("x");
  });

  it("stops a render that runs too long", () => {
    const renderer = createRenderer({ renderTimeMs: 50, memoryLimit: 1e9, maxOutputLength: 1e9 });
    const loop = "{% for a in (1..100000) %}{% for b in (1..100000) %}{% endfor %}{% endfor %}";
    const started = Date.now();
    expect(problemOf(() => renderer.render({ subject: "s", body: loop }, {}))).toMatchObject({ part: "body", kind: "limit" });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("stops a render at the caller's budget, below its own limit", () => {
    const renderer = createRenderer({ memoryLimit: 1e9, maxOutputLength: 1e9 });
    const loop = "{% for a in (1..100000) %}{% for b in (1..100000) %}{% endfor %}{% endfor %}";
    expect(problemOf(() => renderer.render({ subject: loop, body: "b" }, {}, { timeMs: 20 }))).toMatchObject({
      part: "subject",
      kind: "limit",
    });
    // A budget already spent stops the next render at once.
    expect(problemOf(() => renderer.render({ subject: "s", body: loop }, {}, { timeMs: -5 }))).toMatchObject({ kind: "limit" });
    expect(renderer.render({ subject: "s", body: "b" }, {}, { timeMs: 1_000 })).toEqual({ subject: "s", body: "b" });
  });

  it("bounds loops through the memory limit (ranges count their items)", () => {
    const renderer = createRenderer({ memoryLimit: 10_000 });
    expect(renderer.render({ subject: "s", body: "{% for i in (1..5000) %}{% endfor %}ok" }, {}).body).toBe("ok");
    const problem = problemOf(() => renderer.render({ subject: "s", body: "{% for i in (1..20000) %}{% endfor %}" }, {}));
    expect(problem).toMatchObject({ kind: "limit", message: "memory alloc limit exceeded" });
    // Nested loops allocate their inner range on every pass.
    expect(
      problemOf(() =>
        renderer.render({ subject: "s", body: "{% for i in (1..1000) %}{% for j in (1..1000) %}{% endfor %}{% endfor %}" }, {}),
      ),
    ).toMatchObject({ kind: "limit" });
  });

  it("bounds the output, also when capture doubles a string", () => {
    const renderer = createRenderer({ maxOutputLength: 1_000 });
    expect(renderer.render({ subject: "s", body: "{% for i in (1..99) %}0123456789{% endfor %}" }, {}).body).toHaveLength(990);
    expect(problemOf(() => renderer.render({ subject: "s", body: "{% for i in (1..101) %}0123456789{% endfor %}" }, {}))).toMatchObject({
      part: "body",
      kind: "limit",
    });
    const doubling =
      "{% assign x = 'ab' %}{% for i in (1..40) %}{% capture x %}{{ x | raw }}{{ x | raw }}{% endcapture %}{% endfor %}{{ x }}";
    expect(problemOf(() => renderer.render({ subject: "s", body: doubling }, {}))).toMatchObject({ kind: "limit" });
    expect(problemOf(() => renderer.render({ subject: "{% for i in (1..200) %}subject{% endfor %}", body: "b" }, {}))).toMatchObject({
      part: "subject",
      kind: "limit",
    });
  });

  it("refuses a source longer than the limit", () => {
    const renderer = createRenderer({ maxSourceLength: 100 });
    expect(renderer.validate({ body: "x".repeat(101) })).toEqual([{ part: "body", kind: "limit", message: "longer than 100 characters" }]);
    expect(renderer.validate({ body: "x".repeat(100) })).toEqual([]);
  });
});

describe("memory budget", () => {
  const memory = { kind: "limit", message: "memory alloc limit exceeded" };
  /** A body that renders nothing after building what it allocates. */
  const budgeted = (memoryLimit: number) => createRenderer({ memoryLimit, renderTimeMs: 60_000 });
  const renderBody = (renderer: ReturnType<typeof createRenderer>, text: string, data: Record<string, unknown> = {}) =>
    renderer.render({ subject: "s", body: text }, { data }).body;

  it("stops issue 28's template: captures of escaped text kept in an array", () => {
    // The issue's template scaled down to a budget of 1,000,000: every capture holds 51,200 escaped characters.
    const template =
      '{% assign big="&&&&&&&&&&" %}{% for i in (1..10) %}{% capture big %}{{big|raw}}{{big|raw}}{% endcapture %}{% endfor %}' +
      '{% assign keep=""|split:"" %}{% for i in (1..1000) %}{% capture z %}{{big}}{{i}}{% endcapture %}{% assign keep=keep|push:z %}{% endfor %}';
    expect(problemOf(() => renderBody(budgeted(1_000_000), template))).toMatchObject({ part: "body", ...memory });
    // The same at full size with the default limits.
    const issue = template.replace("(1..10)", "(1..17)").replace("(1..1000)", "(1..100000)");
    expect(problemOf(() => renderBody(createRenderer({ renderTimeMs: 60_000 }), issue))).toMatchObject(memory);
  });

  it("counts what a capture holds", () => {
    const renderer = budgeted(100_000);
    const capture = "{% for i in (1..n) %}{% capture z %}{{ text }}{% endcapture %}{% endfor %}ok";
    const text = "x".repeat(2_000);
    expect(renderBody(renderer, capture, { n: 40, text })).toBe("ok");
    expect(problemOf(() => renderBody(renderer, capture, { n: 60, text }))).toMatchObject(memory);
    // Literal text written into a capture counts too.
    expect(problemOf(() => renderBody(renderer, `{% for i in (1..60) %}{% capture z %}${text}{% endcapture %}{% endfor %}`))).toMatchObject(
      memory,
    );
  });

  it("counts escaped values by their escaped length", () => {
    const renderer = budgeted(100_000);
    // 10,000 ampersands escape to 50,000 characters: two fit, three do not.
    const data = { amps: "&".repeat(10_000) };
    expect(renderBody(renderer, "{{ amps }}{{ amps }}", data)).toHaveLength(100_000);
    expect(problemOf(() => renderBody(renderer, "{{ amps }}{{ amps }}{{ amps }}", data))).toMatchObject(memory);
    // The subject is not escaped: nothing is allocated, nothing counted.
    expect(renderer.render({ subject: "{{ amps }}{{ amps }}{{ amps }}", body: "b" }, { data }).subject).toHaveLength(30_000);
  });

  it("counts what string filters return, beyond what liquidjs counts", () => {
    const renderer = budgeted(100_000);
    // liquidjs counts the input, 12,000 and 15,000 characters; url_encode returns 9 characters for each €, newline_to_br
    // 7 for each line break, escape 5 for each quote.
    expect(problemOf(() => renderBody(renderer, "{% assign e = text | url_encode %}", { text: "€".repeat(12_000) }))).toMatchObject(memory);
    expect(problemOf(() => renderBody(renderer, "{% assign e = text | newline_to_br %}", { text: "\n".repeat(15_000) }))).toMatchObject(
      memory,
    );
    expect(
      problemOf(() =>
        renderBody(renderer, "{% for i in (1..20) %}{% assign e = text | escape %}{% endfor %}", { text: "'".repeat(1_000) }),
      ),
    ).toMatchObject(memory);
    expect(renderBody(renderer, "{{ text | url_encode | size }}", { text: "€".repeat(1_000) })).toBe("9000");
  });

  it("counts an array's text when a filter joins it, and what push adds", () => {
    const renderer = budgeted(100_000);
    const text = "x".repeat(2_000);
    // Pushing one string 60 times holds 120,000 characters of text for a join or comparison to make.
    const pushes = '{% assign keep = "" | split: "" %}{% for i in (1..n) %}{% assign keep = keep | push: text %}{% endfor %}';
    expect(renderBody(renderer, `${pushes}{{ keep | size }}`, { n: 40, text })).toBe("40");
    expect(problemOf(() => renderBody(renderer, pushes, { n: 60, text }))).toMatchObject(memory);
    // An array of 40 such strings joins to 80,000 characters: once fits, twice does not.
    const list = Array.from({ length: 40 }, () => text);
    expect(renderBody(renderer, "{{ list | join: '' | size }}", { list })).toBe("80000");
    expect(problemOf(() => renderBody(renderer, "{{ list | upcase | size }}{{ list | plus: 1 }}", { list }))).toMatchObject(memory);
  });

  it("stops an array pushed into itself before it outgrows any join", () => {
    // Each pass doubles the text the array would join to: 2^40 items after 40 passes, though it has only 40.
    const template = '{% assign n = "" | split: "" %}{% for i in (1..40) %}{% assign n = n | push: n %}{% endfor %}{{ n | size }}';
    expect(problemOf(() => renderBody(budgeted(1_000_000), template))).toMatchObject(memory);
  });

  it("refuses to join an array into the output past the output's limit", () => {
    const renderer = createRenderer({ maxOutputLength: 1_000 });
    expect(renderBody(renderer, "{{ list }}", { list: ["a", ["b", "c"]] })).toBe("abc");
    expect(problemOf(() => renderBody(renderer, "{{ list }}", { list: Array.from({ length: 20 }, () => "x".repeat(100)) }))).toMatchObject({
      kind: "limit",
    });
  });

  it("gives each render its own budget", () => {
    const renderer = budgeted(100_000);
    const data = { amps: "&".repeat(10_000) };
    for (let round = 0; round < 5; round++) expect(renderBody(renderer, "{{ amps }}{{ amps }}", data)).toHaveLength(100_000);
  });
});

describe("validation", () => {
  it("answers no problem for valid parts, and checks only the parts given", () => {
    expect(validateTemplate({ subject: "Hi {{name}}", body: "{% if a %}x{% endif %}" })).toEqual([]);
    expect(validateTemplate({ body: "{{ fine }}" })).toEqual([]);
    expect(validateTemplate({})).toEqual([]);
  });

  it("names the part and the line of each parse error", () => {
    const problems = validateTemplate({ subject: "Hi {{ name", body: "<p>\n  ok\n  {% if x %}\n</p>" });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatchObject({ part: "subject", kind: "parse", line: 1 });
    expect(problems[1]).toMatchObject({ part: "body", kind: "parse", line: 3 });
    expect(problems[1]?.message).toMatch(/not closed/);
    expect(problems[1]?.message).not.toMatch(/line:/);
  });

  it("refuses unknown tags and filters when parsed", () => {
    expect(validateTemplate({ body: "a\n{% nonsense %}" })[0]).toMatchObject({ line: 2, message: expect.stringMatching(/nonsense/) });
    expect(validateTemplate({ body: "{{ name | no_such_filter }}" })[0]).toMatchObject({
      line: 1,
      message: expect.stringMatching(/no_such_filter/),
    });
  });

  it("TemplateError's message carries part and line", () => {
    try {
      parseTemplate({ subject: "ok", body: "\n{% include 'x' %}" });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(TemplateError);
      expect((error as Error).message).toMatch(/^body line 2: the include tag is not allowed/);
    }
  });

  it("a compiled template renders many times with different variables", () => {
    const compiled = parseTemplate({ subject: "For {{ name }}", body: "<p>{{ name ?? 'you' }}</p>" });
    expect(renderTemplate(compiled, { data: { name: "Ada" } })).toEqual({ subject: "For Ada", body: "<p>Ada</p>" });
    expect(renderTemplate(compiled, { data: {} })).toEqual({ subject: "For ", body: "<p>you</p>" });
  });
});
