// Compile-time agreement checks between types, for types derived from schemas (json-schema-to-ts)
// and the hand-written types they must match. Each is used as `Assert<...>`: a mismatch fails tsc.

/** A `true` type argument, or a compile error. */
export type Assert<T extends true> = T;

/** Each of A and B is assignable to the other. */
export type Equivalent<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** Every A is a B. */
export type Assignable<From, To> = [From] extends [To] ? true : false;

/** The members T must have. */
// biome-ignore lint/complexity/noBannedTypes: `{} extends Pick<T, K>` is how a type asks whether K is optional
export type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];

/** A and B name the same members, and require the same ones. */
export type SameMembers<A, B> =
  Equivalent<keyof A, keyof B> extends true ? Equivalent<RequiredKeys<A>, RequiredKeys<B>> : false;
