// A client built from /openapi.json alone, as a generator would build one: operations by operationId,
// paths and methods from the document, request bodies checked against the document's schemas.
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';

type FormatsPlugin = typeof formatsModule.default;
const addFormats: FormatsPlugin =
  (formatsModule as unknown as { default?: FormatsPlugin }).default ?? (formatsModule as unknown as FormatsPlugin);

export interface CallOptions {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
}

export type Call = (operationId: string, options?: CallOptions) => Promise<{ status: number; body: any }>;

export function openApiClient(doc: any, documentUrl: string, apiKey: string): Call {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'client-doc');
  const server = new URL(doc.servers?.[0]?.url ?? '/', documentUrl);
  const operations = new Map<string, { method: string; path: string; operation: any }>();
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, operation] of Object.entries<any>(item))
      operations.set(operation.operationId, { method, path, operation });
  }
  return async (operationId, { params = {}, query = {}, body } = {}) => {
    const found = operations.get(operationId);
    if (!found) throw new Error(`no operation ${operationId} in the document`);
    const { method, path, operation } = found;
    const schema = operation.requestBody?.content?.['application/json']?.schema;
    if (body !== undefined) {
      if (!schema) throw new Error(`${operationId} takes no JSON body`);
      const validate = ajv.compile({
        $ref: `client-doc#/paths/${encodeURIComponent(path.replace(/~/g, '~0').replace(/\//g, '~1'))}/${method}/requestBody/content/application~1json/schema`,
      });
      if (!validate(body))
        throw new Error(`${operationId}: the body does not match the document: ${ajv.errorsText(validate.errors)}`);
    }
    const url = new URL(
      path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? '')).replace(/^\//, ''),
      server,
    );
    for (const [name, value] of Object.entries(query)) url.searchParams.append(name, value);
    const secured = (operation.security ?? doc.security ?? []).length > 0;
    const res = await fetch(url, {
      method: method.toUpperCase(),
      headers: {
        ...(secured ? { authorization: `Bearer ${apiKey}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
}
