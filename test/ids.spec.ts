// Ids: a prefix and a ULID, unique, sorting in creation order, their random part drawn from a pool
// of crypto bytes (src/ids.ts).
import { expect } from 'chai';
import { IdPrefix, newId } from '../src/ids.js';

describe('Ids', () => {
  it('are unique, sort in the order they were made, and draw a fresh random part every millisecond', () => {
    const ids: string[] = [];
    const firstOfEachMs: string[] = [];
    // 300 milliseconds' first ids use 4,800 pooled bytes: more than the pool holds, so it is refilled.
    for (let ms = 0; ms < 300; ms++) {
      const start = Date.now();
      firstOfEachMs.push(newId(IdPrefix.run));
      ids.push(firstOfEachMs[firstOfEachMs.length - 1], newId(IdPrefix.run), newId(IdPrefix.run));
      while (Date.now() === start); // the next id falls in the next millisecond
    }
    for (const id of ids) expect(id).to.match(/^otr_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(new Set(ids).size).to.equal(ids.length);
    expect([...ids].sort()).to.deep.equal(ids);
    // The random part (the last 16 characters) of each millisecond's first id: spread over the alphabet.
    const randomParts = new Set(firstOfEachMs.map((id) => id.slice(-16)));
    expect(randomParts.size).to.equal(firstOfEachMs.length);
    const lastChars = new Set(firstOfEachMs.map((id) => id.slice(-1)));
    expect(lastChars.size).to.be.at.least(24); // of 32: fewer than 24 in 300 fair draws has odds below 1 in 10^35
  });
});
