import { describe, expect, it } from "vitest";
import { lineAt, preprocessTemplate } from "./preprocess.js";

const rewrite = (source: string) => {
  const result = preprocessTemplate(source);
  if (!result.ok) throw new Error(result.failure.message);
  return result.source;
};

describe("preprocessTemplate", () => {
  it("rewrites ?? into the fallback filter, in value position only", () => {
    expect(rewrite('{{ a ?? "x" }}')).toBe('{{ a | fallback: "x" }}');
    expect(rewrite('{{a??b??"c"|upcase}}')).toBe('{{a| fallback:b| fallback:"c"|upcase}}');
    expect(rewrite('{{- a ?? "x" -}}')).toBe('{{- a | fallback: "x" -}}');
  });

  it("rewrites words separated by spaces into a data lookup", () => {
    expect(rewrite("{{ first name }}")).toBe('{{ data["first name"] }}');
    expect(rewrite("{{first name|upcase}}")).toBe('{{data["first name"]|upcase}}');
    expect(rewrite("{{ first  name ?? last name }}")).toBe('{{ data["first  name"] | fallback: data["last name"] }}');
  });

  it("leaves Liquid expressions, strings, plain text and verbatim blocks alone", () => {
    for (const source of [
      "{{ name }}",
      "{{ a.b[0] | plus: 1 }}",
      '{{ "a ?? b" }}',
      "Why?? {{ x }}",
      "{% raw %}{{ a ?? b }}{% endraw %}",
      "{%- comment -%}{{ ?? }}{%- endcomment -%}",
      '{% if x == "{{ a ?? b }}" %}{% endif %}',
      "{{ a or b }}",
      "{{ unclosed ?? ",
    ]) {
      expect(rewrite(source)).toBe(source);
    }
  });

  it("never adds or removes a line break", () => {
    const source = '{{\n  first name\n  ?? "x"\n}}\n{{ a ?? b }}';
    expect(rewrite(source).split("\n")).toHaveLength(source.split("\n").length);
  });

  it("reports where a misplaced ?? is", () => {
    const result = preprocessTemplate("a\nb {{ x | upcase ?? 'y' }}");
    expect(result.ok).toBe(false);
    if (!result.ok) expect(lineAt("a\nb {{ x | upcase ?? 'y' }}", result.failure.offset)).toBe(2);
  });
});
