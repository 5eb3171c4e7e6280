// Modules the build (extension/build/build.ts) makes, not files.

declare module 'otp:validators' {
  /** An ajv standalone validator: compiled at build time from the protocol's schemas (no eval at run time). */
  export interface CompiledValidator {
    (data: unknown): boolean;
    errors?: Array<{ instancePath: string; message?: string }> | null;
  }
  /** Schema $id -> its validator (the message schemas of the frames the service sends). */
  export const validators: Record<string, CompiledValidator>;
}

declare module 'otp:page-engine' {
  /** The page engine (src/page/engine.ts) as the text of a script, evaluated in the run's page. */
  const source: string;
  export default source;
}
