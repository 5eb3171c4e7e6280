// Every response a suite receives through TestService.request() is checked against the service's own
// /openapi.json: the route must be in it, the status must be declared for it, and a JSON body must
// match the declared schema. A request to a path the document does not know may only get the error
// body with 404 or 405 (an unknown route), never anything else.

import type { ValidateFunction } from 'ajv/dist/2020.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';

type FormatsPlugin = typeof formatsModule.default;
const addFormats: FormatsPlugin =
  (formatsModule as unknown as { default?: FormatsPlugin }).default ?? (formatsModule as unknown as FormatsPlugin);

export interface RecordedResponse {
  method: string;
  /** Path as requested, from the service root (with /api/v1), without the query. */
  path: string;
  status: number;
  body: unknown;
  contentType: string | null;
}

const DOC_ID = 'https://otp-service.test/openapi.json';

function pointer(...segments: string[]): string {
  return `#/${segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;
}

export class OpenApiResponseChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  private readonly templates: Array<{ template: string; regex: RegExp }>;
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(private readonly doc: any) {
    addFormats(this.ajv);
    this.ajv.addSchema(doc, DOC_ID);
    this.templates = Object.keys(doc.paths).map((template) => ({
      template,
      regex: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
    }));
  }

  private validator(ptr: string): ValidateFunction {
    let fn = this.cache.get(ptr);
    if (!fn) {
      fn = this.ajv.getSchema(DOC_ID + ptr);
      if (!fn) throw new Error(`no schema at ${ptr}`);
      this.cache.set(ptr, fn);
    }
    return fn;
  }

  /** What is wrong with one response; an empty list when it matches the document. */
  check(r: RecordedResponse): string[] {
    const what = `${r.method} ${r.path} -> ${r.status}`;
    const matches = this.templates.filter((t) => t.regex.test(r.path));
    // The most specific template wins (fewest parameters): /a/b/links before /a/{id}/links.
    matches.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
    const method = r.method.toLowerCase();
    const match = matches.find((m) => this.doc.paths[m.template][method]);
    if (!match) {
      if (r.status !== 404 && r.status !== 405) return [`${what}: route not in /openapi.json`];
      const fn = this.validator(pointer('components', 'schemas', 'ErrorBody'));
      return fn(r.body)
        ? []
        : [`${what}: unknown route answered without the error body: ${this.ajv.errorsText(fn.errors)}`];
    }
    const operation = this.doc.paths[match.template][method];
    let responsePtr = pointer('paths', match.template, method, 'responses', String(r.status));
    let response = operation.responses[String(r.status)];
    if (!response) return [`${what}: status ${r.status} not declared for ${method.toUpperCase()} ${match.template}`];
    if (response.$ref) {
      responsePtr = response.$ref;
      response = response.$ref
        .split('/')
        .slice(1)
        .reduce((node: any, key: string) => node[key], this.doc);
    }
    const json = response.content?.['application/json'];
    if (!json) {
      // Files and redirect notes are not JSON; a JSON body must be declared, though.
      const undeclaredJson = r.body !== undefined && r.body !== '' && r.contentType?.includes('application/json');
      return undeclaredJson ? [`${what}: a JSON body came but none is declared`] : [];
    }
    if (!r.contentType?.includes('application/json')) return [`${what}: expected JSON, got ${r.contentType}`];
    const fn = this.validator(`${responsePtr}/content/application~1json/schema`);
    return fn(r.body) ? [] : [`${what}: body does not match the document: ${this.ajv.errorsText(fn.errors)}`];
  }

  checkAll(responses: readonly RecordedResponse[]): string[] {
    return responses.flatMap((r) => this.check(r));
  }
}
