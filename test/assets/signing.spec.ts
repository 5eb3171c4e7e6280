import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { contentDisposition } from '../../src/assets/storage/content-disposition.js';
import { UrlSigner } from '../../src/assets/storage/url-signer.js';

describe('Signed fs links', () => {
  const signer = new UrlSigner(randomBytes(32));
  const now = Date.UTC(2026, 0, 1);
  const exp = String(now / 1000 + 900);

  it('accepts its own signature until the expiry, then calls it expired', () => {
    const sig = signer.sign('ast_a', Number(exp));
    expect(signer.check('ast_a', exp, sig, now)).to.equal('valid');
    expect(signer.check('ast_a', exp, sig, now + 900_000)).to.equal('valid');
    expect(signer.check('ast_a', exp, sig, now + 901_000)).to.equal('expired');
  });

  it('binds the asset, the expiry, the method and the key', () => {
    const sig = signer.sign('ast_a', Number(exp));
    expect(signer.check('ast_b', exp, sig, now)).to.equal('invalid');
    expect(signer.check('ast_a', String(Number(exp) + 1), sig, now)).to.equal('invalid');
    expect(signer.check('ast_a', exp, sig, now, 'DELETE')).to.equal('invalid');
    expect(new UrlSigner(randomBytes(32)).check('ast_a', exp, sig, now)).to.equal('invalid');
  });

  it('calls missing or malformed parts invalid', () => {
    const sig = signer.sign('ast_a', Number(exp));
    expect(signer.check('ast_a', undefined, sig, now)).to.equal('invalid');
    expect(signer.check('ast_a', exp, undefined, now)).to.equal('invalid');
    expect(signer.check('ast_a', '1e12', sig, now)).to.equal('invalid');
    expect(signer.check('ast_a', exp, sig.slice(1), now)).to.equal('invalid');
  });
});

describe('Content-Disposition of served assets', () => {
  it('shows safe types inline and offers the rest as downloads, with an exact UTF-8 name', () => {
    expect(contentDisposition('photo.png', 'image/png')).to.equal(
      `inline; filename="photo.png"; filename*=UTF-8''photo.png`,
    );
    expect(contentDisposition('page.html', 'text/html')).to.match(/^attachment; /);
    expect(contentDisposition('image.svg', 'image/svg+xml')).to.match(/^attachment; /);
    expect(contentDisposition('naïve "quote" 100%.txt', 'text/plain')).to.equal(
      `inline; filename="na_ve _quote_ 100_.txt"; filename*=UTF-8''na%C3%AFve%20%22quote%22%20100%25.txt`,
    );
  });
});
