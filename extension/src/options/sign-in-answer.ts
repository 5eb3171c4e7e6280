// The answer of the authorization server to a sign-in (signin.ts), read from the address it sent the
// browser back to. Pure: tested without a browser.

/** The code from the address the server sent the browser back to; its state must be ours. */
export function codeOf(redirected: string, state: string): string {
  const params = new URL(redirected).searchParams;
  const error = params.get('error');
  if (error)
    throw new Error(
      error === 'access_denied' ? 'sign-in was refused' : `${error}: ${params.get('error_description') ?? ''}`,
    );
  if (params.get('state') !== state) throw new Error('the answer was not for this sign-in (state differs)');
  const code = params.get('code');
  if (!code) throw new Error('the answer carries no code');
  return code;
}
