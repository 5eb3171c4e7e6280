// A condition's "these members must be present" (in if/then/else and oneOf branches), for members the
// enclosing object schema declares. Each is also named in the condition's `properties`, as `true`
// (which constrains nothing), because OpenAPI linters and client generators read such a subschema
// alone: a member it requires without declaring reads to them as a member nobody can fill.

/** `{ required: names, properties: { [name]: true } }`. */
export function present<const K extends string>(...names: K[]): { required: K[]; properties: Record<K, true> } {
  return { required: names, properties: Object.fromEntries(names.map((n) => [n, true])) as Record<K, true> };
}
