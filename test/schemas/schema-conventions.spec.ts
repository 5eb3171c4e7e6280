// The OTP schemas as a set: naming, references, descriptions, the split between directions, the one
// Ajv instance, the OpenAPI copies, and agreement with the machines' types.
import { expect } from 'chai';
import type { Capabilities, HelloPayload, StepExecPayload, StepReport } from '../../machines/types.js';
import type { JsonSchema, TestCaseStep } from '../../src/otp/protocol/schemas/index.js';
import {
  ACTION_NAMES,
  INBOUND_TYPES,
  inboundMessageSchemas,
  MESSAGE_TYPES,
  OUTBOUND_TYPES,
  otpSchemas,
  otpSchemasById,
  outboundMessageSchemas,
  toOpenApiComponents,
} from '../../src/otp/protocol/schemas/index.js';
import { validatorFor } from '../../src/otp/protocol/validators.js';
import { ajv } from '../../src/validation/ajv.js';

describe('OTP schemas follow one set of conventions and agree with the machine types', () => {
  it('every schema has a unique PascalCase $id', () => {
    const ids = otpSchemas.map((s) => s.$id);
    for (const id of ids) expect(id).to.match(/^[A-Z][A-Za-z0-9]+$/);
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('every $ref names a schema of the list', () => {
    const refs: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === '$ref') refs.push(String(x));
          else walk(x);
        }
      }
    };
    otpSchemas.forEach(walk);
    expect(refs.length).to.be.greaterThan(20);
    for (const ref of refs) expect(otpSchemasById.has(ref), ref).to.equal(true);
  });

  it('every declared property has a description, and objects with properties reject extras', () => {
    const missing: string[] = [];
    const open: string[] = [];
    const walk = (v: unknown, path: string, inCondition: boolean): void => {
      if (Array.isArray(v)) {
        for (const [i, x] of v.entries()) walk(x, `${path}[${i}]`, inCondition);
        return;
      }
      if (!v || typeof v !== 'object') return;
      const s = v as Record<string, unknown>;
      const props = s.properties as Record<string, unknown> | undefined;
      if (props && !inCondition) {
        for (const [name, sub] of Object.entries(props)) {
          if (sub && typeof sub === 'object' && typeof (sub as JsonSchema).description !== 'string')
            missing.push(`${path}.${name}`);
        }
        if (s.additionalProperties !== false) open.push(path);
      }
      for (const [k, x] of Object.entries(s)) {
        // if/then/else, allOf and oneOf members only restate properties declared by their parent.
        walk(x, `${path}/${k}`, inCondition || ['if', 'then', 'else', 'allOf', 'oneOf'].includes(k));
      }
    };
    for (const s of otpSchemas) walk(s, String(s.$id), false);
    expect(missing, 'properties without description').to.deep.equal([]);
    expect(open, 'objects without additionalProperties: false').to.deep.equal([]);
  });

  it('the 15 message types are split between the two directions', () => {
    expect(MESSAGE_TYPES).to.have.length(15);
    const both = new Set([...INBOUND_TYPES, ...OUTBOUND_TYPES]);
    expect([...both].sort()).to.deep.equal([...MESSAGE_TYPES].sort());
    expect(Object.keys(inboundMessageSchemas).sort()).to.deep.equal([...INBOUND_TYPES].sort());
    expect(Object.keys(outboundMessageSchemas).sort()).to.deep.equal([...OUTBOUND_TYPES].sort());
    for (const id of [...Object.values(inboundMessageSchemas), ...Object.values(outboundMessageSchemas)]) {
      expect(otpSchemasById.has(id), id).to.equal(true);
    }
  });

  it('StepAction lists one branch per action name', () => {
    const oneOf = otpSchemasById.get('StepAction')!.oneOf as Array<{ $ref: string }>;
    const tags = oneOf.map(
      (b) => (otpSchemasById.get(b.$ref)!.properties as Record<string, { const: string }>).action.const,
    );
    expect(tags).to.deep.equal([...ACTION_NAMES]);
  });

  it('toOpenApiComponents rewrites $ref on copies and drops $id', () => {
    const components = toOpenApiComponents();
    expect(Object.keys(components)).to.have.length(otpSchemas.length);
    const locator = components.Locator!;
    expect(locator.$id).to.equal(undefined);
    expect((locator.properties as Record<string, JsonSchema>).within!.$ref).to.equal('#/components/schemas/Locator');
    expect((components.StepAction!.oneOf as JsonSchema[])[0]!.$ref).to.equal('#/components/schemas/NavigateStep');
    // the originals still say 'Locator'
    expect((otpSchemasById.get('Locator')!.properties as Record<string, JsonSchema>).within!.$ref).to.equal('Locator');
    expect(otpSchemasById.get('Locator')!.$id).to.equal('Locator');
  });

  it('schema members agree with the TypeScript types of machines/types.ts', () => {
    const keysOf = (id: string, path: string[] = []): string[] => {
      let s = otpSchemasById.get(id) as JsonSchema;
      for (const p of path) s = (s.properties as Record<string, JsonSchema>)[p]!;
      return Object.keys(s.properties as object).sort();
    };
    const capabilities = {
      record: 1,
      replay: 1,
      screenshot: 1,
      upload: 1,
      crossOrigin: 1,
      eval: 1,
      maxParallel: 1,
    } satisfies Record<keyof Capabilities, 1>;
    const hello = {
      executor: 1,
      name: 1,
      version: 1,
      capabilities: 1,
      projectId: 1,
      resumeSessionId: 1,
    } satisfies Record<keyof HelloPayload, 1>;
    const report = {
      stepIndex: 1,
      status: 1,
      durationMs: 1,
      error: 1,
      evidence: 1,
      actual: 1,
      usedLocator: 1,
      triedLocators: 1,
      textReplaced: 1,
    } satisfies Record<keyof StepReport, 1>;
    const exec = {
      stepIndex: 1,
      timeoutMs: 1,
      continueOnFail: 1,
      evidence: 1,
      label: 1,
      step: 1,
      attempt: 1,
      freshContext: 1,
    } satisfies Record<keyof StepExecPayload, 1>;
    const stepError = { code: 1, message: 1, triedLocators: 1 } satisfies Record<
      keyof NonNullable<StepReport['error']>,
      1
    >;
    const tcStep = { otp: 1, label: 1, timeoutMs: 1, continueOnFail: 1, evidence: 1 } satisfies Record<
      keyof TestCaseStep,
      1
    >;
    expect(keysOf('Capabilities')).to.deep.equal(Object.keys(capabilities).sort());
    expect(keysOf('HelloPayload')).to.deep.equal(Object.keys(hello).sort());
    expect(keysOf('StepResultPayload')).to.deep.equal(Object.keys(report).sort());
    expect(keysOf('StepResultPayload', ['error'])).to.deep.equal(Object.keys(stepError).sort());
    expect(keysOf('StepExecPayload')).to.deep.equal(Object.keys(exec).sort());
    expect(keysOf('TestCaseStep')).to.deep.equal(Object.keys(tcStep).sort());
    expect(otpSchemasById.get('HelloPayload')!.required).to.deep.equal(['executor', 'capabilities']);
    expect(otpSchemasById.get('StepResultPayload')!.required).to.deep.equal(['stepIndex', 'status']);
  });

  it('uses one Ajv instance with every schema compiled', () => {
    for (const s of otpSchemas) expect(ajv.getSchema(String(s.$id)), String(s.$id)).to.be.a('function');
    expect(() => validatorFor('NoSuchSchema')).to.throw(/unknown OTP schema id/);
  });
});
