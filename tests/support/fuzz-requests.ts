import fc from "fast-check";

/**
 * fast-check arbitraries for tests/fuzz.test.ts: requests to one operation of the gateway's /openapi.json whose path
 * parameters, query strings and bodies break the operation's schema (wrong types, huge strings, deep nesting, NUL,
 * lone surrogates, numbers out of range, malformed JSON), mixed with values that fit so that each field's checks
 * are reached one at a time.
 */

export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
}

interface Parameter {
  name: string;
  in: string;
  schema?: JsonSchema;
}

interface OpenApiOperation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  security?: Array<Record<string, unknown>>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

export interface Operation {
  method: string;
  /** As the document writes it: /contacts/{id}. */
  path: string;
  pathParameters: Parameter[];
  queryParameters: Parameter[];
  /** The JSON body's schema, when the operation takes one. */
  body?: JsonSchema;
  multipart: boolean;
  publicKey: boolean;
}

/** Every operation of the document, its `$ref`s resolved. */
export function operationsOf(document: OpenApiDocument): Operation[] {
  const resolve = (schema: JsonSchema | undefined, seen = 0): JsonSchema | undefined => {
    if (!schema?.$ref || seen > 20) return schema;
    const name = schema.$ref.replace(/^#\/components\/schemas\//, "");
    return resolve(document.components?.schemas?.[name], seen + 1);
  };
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([method]) => ["get", "post", "put", "patch", "delete"].includes(method))
      .map(([method, operation]) => {
        const parameters = (operation.parameters ?? []).map((parameter) => ({ ...parameter, schema: resolve(parameter.schema) }));
        const content = operation.requestBody?.content ?? {};
        return {
          method: method.toUpperCase(),
          path,
          pathParameters: parameters.filter((parameter) => parameter.in === "path"),
          queryParameters: parameters.filter((parameter) => parameter.in === "query"),
          body: resolveDeep(resolve(content["application/json"]?.schema), resolve),
          multipart: "multipart/form-data" in content,
          publicKey: (operation.security ?? []).some((scheme) => "publicKey" in scheme),
        };
      }),
  );
}

function resolveDeep(
  schema: JsonSchema | undefined,
  resolve: (schema: JsonSchema | undefined) => JsonSchema | undefined,
  depth = 0,
): JsonSchema | undefined {
  const resolved = resolve(schema);
  if (!resolved || depth > 8) return resolved;
  const deeper = (inner: JsonSchema | undefined) => resolveDeep(inner, resolve, depth + 1);
  return {
    ...resolved,
    ...(resolved.properties
      ? { properties: Object.fromEntries(Object.entries(resolved.properties).map(([key, value]) => [key, deeper(value) ?? {}])) }
      : {}),
    ...(resolved.items ? { items: deeper(resolved.items) } : {}),
    ...(resolved.anyOf ? { anyOf: resolved.anyOf.map((inner) => deeper(inner) ?? {}) } : {}),
    ...(resolved.oneOf ? { oneOf: resolved.oneOf.map((inner) => deeper(inner) ?? {}) } : {}),
    ...(resolved.allOf ? { allOf: resolved.allOf.map((inner) => deeper(inner) ?? {}) } : {}),
  };
}

/** JSON text put into the body as it is, for what JSON.stringify cannot write (1e999, 100,000 nested arrays). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON.stringify, with each RawJson written as its text. */
export function jsonTextOf(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, item) => {
    if (!(item instanceof RawJson)) return item;
    raws.push(item.text);
    return `\u0007${raws.length - 1}\u0007`;
  });
  return (text ?? "null").replace(/"\\u0007(\d+)\\u0007"/g, (marker, index: string) => raws[Number(index)] ?? marker);
}

const repeatTo = (unit: string, length: number) => unit.repeat(Math.max(1, Math.ceil(length / unit.length)));

/** Strings that have broken parsers, databases, templates and URL handling. */
const shortNastyString = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "a\u0000b",
    "\ud800",
    "\udfff",
    "a\udc00b\ud83d",
    "\u202e\u200b\ufeff",
    "😀",
    "null",
    "true",
    "-1",
    "1e999",
    "NaN",
    "Infinity",
    "__proto__",
    "constructor",
    "'; DROP TABLE contacts; --",
    "{{ x | append: x }}",
    "{% for a in (1..100000000) %}{% endfor %}",
    "%00%",
    "../../etc/passwd",
    "<script>alert(1)</script>",
    "\r\nX-Injected: 1",
    "@",
    "a@b",
    "2020-13-45T25:61:61Z",
    "sk_x",
  ),
  fc.string({ unit: "binary", maxLength: 40 }),
);

const hugeString = fc
  .tuple(fc.constantFrom("a", " ", "\n", "é", "😀", "\u0000", "\ud800", "<a ", "=", "A", "{{"), fc.integer({ min: 1_000, max: 120_000 }))
  .map(([unit, length]) => repeatTo(unit, length));

const nastyString = fc.oneof({ weight: 4, arbitrary: shortNastyString }, { weight: 1, arbitrary: hugeString });

const nastyNumber = fc.oneof(
  fc.constantFrom(-1, 0, 0.5, -1.5, 2 ** 31, -(2 ** 31) - 1, 2 ** 32, 2 ** 53 + 2, -(2 ** 53) - 2, 1e21, 1e308, -1e308, 5e-324),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom("1e999", "-1e999", `1${"0".repeat(400)}`, "-0.0000000000000000000000001", "1E+2").map((text) => new RawJson(text)),
);

const deepNesting = fc
  .tuple(fc.constantFrom<[string, string]>(["[", "]"], ['{"a":', "}"]), fc.integer({ min: 64, max: 100_000 }))
  .map(([[open, close], depth]) => new RawJson(`${open.repeat(depth)}1${close.repeat(depth)}`));

const nastyKey = fc.oneof(
  shortNastyString.filter((key) => key !== "__proto__"),
  fc.constantFrom("data", "id", "email", "$where"),
);

const nastyScalar = fc.oneof(nastyString, nastyNumber, fc.constantFrom(null, true, false));

/** Any JSON value at all, mostly one that no schema wants. */
const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: nastyScalar },
  { weight: 1, arbitrary: fc.constantFrom([], {}, [null], { "": null }) },
  { weight: 1, arbitrary: deepNesting },
  { weight: 1, arbitrary: fc.array(nastyScalar, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(nastyKey, nastyScalar, { maxKeys: 3 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 50_000 }).map((length) => Array.from({ length }, () => 0)) },
);

const typesOf = (schema: JsonSchema) => (schema.type === undefined ? [] : [schema.type].flat());

/** A value that fits the schema, roughly: enough to get past one field to the next. */
function fitting(schema: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum?.length) return fc.constantFrom(...schema.enum);
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices?.length) return fc.oneof(...choices.map((choice) => fitting(choice, depth)));
  if (schema.allOf?.length) return fitting(Object.assign({}, ...schema.allOf), depth);
  const type = typesOf(schema).find((name) => name !== "null") ?? typesOf(schema)[0];
  switch (type) {
    case "string":
      if (schema.format === "uuid") return fc.uuid();
      if (schema.format === "email") return fc.uuid().map((id) => `fuzz-${id.slice(0, 8)}@example.com`);
      if (schema.format === "date-time") return fc.constantFrom("2030-01-01T00:00:00.000Z", new Date().toISOString());
      if (schema.format === "uri" || schema.format === "url") return fc.constant("https://example.com/fuzz");
      return fc.string({
        minLength: Math.min(schema.minLength ?? 0, 30),
        maxLength: Math.max(Math.min(schema.maxLength ?? 20, 20), Math.min(schema.minLength ?? 0, 30)),
      });
    case "integer": {
      const min = Math.ceil(Math.max(schema.minimum ?? -1_000, -1_000_000));
      return fc.integer({ min, max: Math.max(min, Math.floor(Math.min(schema.maximum ?? 1_000, 1_000_000))) });
    }
    case "number": {
      const min = Math.max(schema.minimum ?? -1_000, -1e6);
      return fc.double({ min, max: Math.max(min, Math.min(schema.maximum ?? 1_000, 1e6)), noNaN: true });
    }
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      if (depth > 3) return fc.constant([]);
      return fc.array(fitting(schema.items ?? {}, depth + 1), {
        minLength: Math.min(schema.minItems ?? 0, 3),
        maxLength: Math.max(Math.min(schema.maxItems ?? 3, 3), Math.min(schema.minItems ?? 0, 3)),
      });
    case "object": {
      if (depth > 3 || !schema.properties) return fc.constant({});
      const required = new Set(schema.required ?? []);
      return fc.record(Object.fromEntries(Object.entries(schema.properties).map(([key, inner]) => [key, fitting(inner, depth + 1)])), {
        requiredKeys: Object.keys(schema.properties).filter((key) => required.has(key)),
      });
    }
    default:
      return fc.constantFrom("x", 1, true, null, {}, []);
  }
}

/** A value just outside the schema's own bounds: one past a length, range or item count. */
function pastBounds(schema: JsonSchema): fc.Arbitrary<unknown> | undefined {
  const type = typesOf(schema)[0];
  if (type === "string" && schema.maxLength !== undefined && schema.maxLength < 200_000)
    return fc.constant("x".repeat(schema.maxLength + 1));
  if ((type === "integer" || type === "number") && (schema.maximum !== undefined || schema.minimum !== undefined))
    return fc.constantFrom((schema.maximum ?? 0) + 1, (schema.minimum ?? 0) - 1, (schema.minimum ?? 0) + 0.5);
  if (type === "array" && schema.maxItems !== undefined && schema.maxItems < 5_000)
    return fc.constant(Array.from({ length: schema.maxItems + 1 }, () => "x"));
  return undefined;
}

/** A value for a field of this schema: often wrong, sometimes right, sometimes right on the outside and wrong inside. */
export function hostile(schema: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  const arms: Array<fc.WeightedArbitrary<unknown>> = [
    { weight: 3, arbitrary: nastyValue },
    { weight: 2, arbitrary: fitting(schema, depth) },
  ];
  const past = pastBounds(schema);
  if (past) arms.push({ weight: 1, arbitrary: past });
  if (depth < 3) {
    const types = typesOf(schema);
    if (types.includes("object") && schema.properties) arms.push({ weight: 3, arbitrary: hostileObject(schema, depth + 1) });
    if (types.includes("array")) arms.push({ weight: 2, arbitrary: fc.array(hostile(schema.items ?? {}, depth + 1), { maxLength: 4 }) });
    const choices = schema.anyOf ?? schema.oneOf;
    if (choices?.length) arms.push({ weight: 2, arbitrary: fc.oneof(...choices.map((choice) => hostile(choice, depth + 1))) });
  }
  return fc.oneof(...arms);
}

/** The schema's object, each property left out, right or wrong, and a few properties it does not know. */
function hostileObject(schema: JsonSchema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.entries(schema.properties ?? {});
  return fc
    .tuple(
      fc.tuple(...properties.map(([, inner]) => fc.option(hostile(inner, depth), { nil: undefined, freq: 4 }))),
      fc.option(fc.dictionary(nastyKey, nastyScalar, { maxKeys: 2 }), { nil: undefined, freq: 3 }),
    )
    .map(([values, extra]) => {
      const object: Record<string, unknown> = { ...extra };
      properties.forEach(([key], index) => {
        if (values[index] !== undefined) object[key] = values[index];
      });
      return object;
    });
}

/** Bodies that are not JSON, or JSON that parsers disagree on. */
const malformedJson = fc.oneof(
  fc.constantFrom(
    "",
    "{",
    "[",
    "nul",
    '{"a":}',
    "{'a':1}",
    '{"__proto__":{"admin":true}}',
    '{"constructor":{"prototype":{"admin":true}}}',
    '\ufeff{"a":1}',
    '{"a":"\\ud800"}',
    '{"a":1e999}',
    '{"a":1,"a":2}',
    `"${"\\u0000".repeat(1_000)}"`,
    "[".repeat(100_000),
  ),
  fc.uint8Array({ minLength: 1, maxLength: 200 }),
  fc.constant(Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc0, 0x80, 0x22, 0x7d])),
);

export type FuzzBody =
  | { kind: "none" }
  | { kind: "json"; value: unknown }
  | { kind: "raw"; contentType: string; payload: string | Uint8Array }
  | { kind: "multipart"; fields: Array<[string, string]>; file?: { name: string; bytes: Uint8Array; type: string } };

const otherContentTypes = fc.constantFrom(
  "text/plain",
  "application/x-www-form-urlencoded",
  "application/json; charset=latin1",
  "application/xml",
  "multipart/form-data; boundary=x",
  "application/json, text/plain",
);

function bodyOf(operation: Operation): fc.Arbitrary<FuzzBody> {
  const arms: Array<fc.WeightedArbitrary<FuzzBody>> = [
    { weight: 1, arbitrary: malformedJson.map((payload) => ({ kind: "raw" as const, contentType: "application/json", payload })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(otherContentTypes, fc.oneof(shortNastyString, fc.constant("a=1&b=%")))
        .map(([contentType, payload]) => ({ kind: "raw" as const, contentType, payload })),
    },
  ];
  if (operation.body) arms.push({ weight: 10, arbitrary: hostile(operation.body).map((value) => ({ kind: "json" as const, value })) });
  else arms.push({ weight: 2, arbitrary: nastyValue.map((value) => ({ kind: "json" as const, value })) });
  if (operation.multipart) {
    arms.push({
      weight: 6,
      arbitrary: fc
        .record({
          fields: fc.array(fc.tuple(nastyKey, shortNastyString), { maxLength: 3 }),
          file: fc.option(
            fc.record({
              name: shortNastyString,
              bytes: fc.oneof(fc.uint8Array({ maxLength: 2_000 }), fc.constant(new TextEncoder().encode("email\na@b\n\u0000,\ud800"))),
              type: fc.constantFrom("text/csv", "image/png", "application/octet-stream", "image/svg+xml", ""),
            }),
            { nil: undefined },
          ),
        })
        .map(({ fields, file }) => ({ kind: "multipart" as const, fields, file })),
    });
  }
  if (!operation.body && !operation.multipart) arms.push({ weight: 4, arbitrary: fc.constant({ kind: "none" as const }) });
  return fc.oneof(...arms);
}

/** encodeURIComponent, except that a lone surrogate is written as its three WTF-8 bytes, which are not UTF-8. */
export function percentEncode(text: string): string {
  let encoded = "";
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    const next = text.charCodeAt(index + 1);
    if (code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      encoded += encodeURIComponent(text.slice(index, index + 2));
      index++;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      encoded += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join("");
    } else {
      encoded += encodeURIComponent(text[index] ?? "").replace(/\./g, "%2E");
    }
  }
  return encoded;
}

/** Short enough that a URL stays under Node's 16 KB request head: the huge values go into bodies. */
const nastyParameter = fc.oneof(
  shortNastyString,
  fc.constantFrom("-1", "0", "1.5", "99999999999999999999", "0x10", " 1", "[]", "{}", "x".repeat(300), "😀".repeat(100)),
);

const rawQueryTails = fc.constantFrom(
  "",
  "&%",
  "&a=%E0%A4%A",
  "&&&=",
  "&a[b]=1",
  "&a[]=1&a[]=2",
  "&__proto__[x]=1",
  "&constructor[prototype][x]=1",
);

export interface FuzzRequest {
  method: string;
  url: string;
  body: FuzzBody;
  idempotencyKey?: string;
}

/** A request to the operation; `pinned` gives the values of path parameters that must stay valid (the project's id). */
export function requestTo(operation: Operation, pinned: (name: string) => string | undefined): fc.Arbitrary<FuzzRequest> {
  const pathValues = fc.tuple(
    ...operation.pathParameters.map((parameter) => {
      const pin = pinned(parameter.name);
      const wrong = nastyParameter.filter((value) => value !== "" && value.replace(/\s/g, "") !== "");
      const right = fitting(parameter.schema ?? { type: "string", format: "uuid" }, 0).map((value) => String(value || "x"));
      return pin === undefined
        ? fc.oneof(right, wrong, fc.uuid())
        : fc.oneof({ weight: 9, arbitrary: fc.constant(pin) }, { weight: 1, arbitrary: wrong });
    }),
  );
  const queryValues = fc.tuple(
    ...operation.queryParameters.map((parameter) =>
      fc.option(
        fc.oneof(
          fitting(parameter.schema ?? {}, 0).map((value) => [String(value)]),
          nastyParameter.map((value) => [value]),
          fc.array(nastyParameter, { minLength: 2, maxLength: 3 }),
        ),
        { nil: undefined },
      ),
    ),
  );
  const extraQuery = fc.option(fc.tuple(nastyKey, nastyParameter), { nil: undefined, freq: 4 });
  return fc
    .record({
      path: pathValues,
      query: queryValues,
      extra: extraQuery,
      tail: rawQueryTails,
      body: operation.method === "GET" ? fc.constant<FuzzBody>({ kind: "none" }) : bodyOf(operation),
      idempotencyKey: fc.option(fc.constantFrom("", "x".repeat(256), "a\tb", "~!@#$%^&*()"), { nil: undefined, freq: 8 }),
    })
    .map(({ path, query, extra, tail, body, idempotencyKey }) => {
      let url = operation.path;
      operation.pathParameters.forEach((parameter, index) => {
        // A "." or ".." segment would be resolved away by the URL itself, before the gateway saw it.
        const value = path[index] ?? "x";
        url = url.replace(`{${parameter.name}}`, percentEncode(value === "." || value === ".." ? "x" : value));
      });
      const pairs = operation.queryParameters.flatMap((parameter, index) =>
        (query[index] ?? []).map((value) => `${percentEncode(parameter.name)}=${percentEncode(value)}`),
      );
      if (extra) pairs.push(`${percentEncode(extra[0])}=${percentEncode(extra[1])}`);
      const search = pairs.join("&") + tail;
      return { method: operation.method, url: search ? `${url}?${search}` : url, body, idempotencyKey };
    });
}
