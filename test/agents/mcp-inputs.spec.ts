// The arguments of a tool are checked as a REST request is: with the one Ajv configuration, and with
// the defaults filled in that REST fills in (a list query's limit and sort). withDefaults fills the
// top level only, as a query has nothing deeper; this keeps it true of every tool.
import { expect } from 'chai';
import { compileInput } from '../../src/mcp/schemas.js';
import { tools } from '../../src/mcp/tools.js';

/** Paths of `default` keywords below a schema's top-level properties (property names are not keywords). */
function nestedDefaults(schema: unknown, path: string, depth: number, out: string[]): string[] {
  if (Array.isArray(schema)) for (const [i, s] of schema.entries()) nestedDefaults(s, `${path}/${i}`, depth, out);
  else if (schema && typeof schema === 'object') {
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'default' && depth > 1) out.push(path);
      if (key === 'properties' || key === '$defs' || key === 'patternProperties') {
        for (const [name, sub] of Object.entries(value as object))
          nestedDefaults(sub, `${path}/${key}/${name}`, depth + 1, out);
      } else if (key !== 'default' && key !== 'enum' && key !== 'const' && key !== 'examples')
        nestedDefaults(value, `${path}/${key}`, depth + 1, out);
    }
  }
  return out;
}

/** Every `$ref` in a schema. */
function refsOf(schema: unknown, out: string[] = []): string[] {
  if (Array.isArray(schema)) for (const s of schema) refsOf(s, out);
  else if (schema && typeof schema === 'object') {
    for (const [key, value] of Object.entries(schema)) {
      if (key === '$ref' && typeof value === 'string') out.push(value);
      else refsOf(value, out);
    }
  }
  return out;
}

describe('MCP: tool arguments', () => {
  // This file loads the tools before anything else does: a schema they refer to by name must be
  // registered by what they import, not by what a service happened to load first.
  it('refer only to schemas bundled with them', () => {
    for (const tool of tools) {
      const defs = Object.keys((tool.inputSchema.$defs as object | undefined) ?? {});
      for (const ref of refsOf(tool.inputSchema))
        expect(
          defs.map((d) => `#/$defs/${d}`),
          `${tool.name}: ${ref}`,
        ).to.include(ref);
    }
  });

  it('have defaults at their top level only, where the tool fills them in', () => {
    const found = tools.flatMap((t) => nestedDefaults(t.inputSchema, t.name, 0, []));
    expect(found).to.deep.equal([]);
    // The walk finds one when there is one.
    expect(nestedDefaults({ properties: { a: { properties: { b: { default: 1 } } } } }, 'x', 0, [])).to.deep.equal([
      'x/properties/a/properties/b',
    ]);
  });

  it('are checked with the defaults filled in, never coerced', () => {
    const list = compileInput(tools.find((t) => t.name === 'svc_list_test_cases')!.inputSchema);
    expect(list({})).to.deep.include({ ok: true, value: { limit: 50, sort: 'createdAt' } });
    expect(list({ limit: '10' })).to.deep.equal({
      ok: false,
      errors: [{ field: 'arguments.limit', message: 'must be an integer' }],
    });
  });
});
