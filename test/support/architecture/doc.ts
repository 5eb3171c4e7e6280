// What docs/architecture.md says the rules check, read from its two tables, so that the page and
// layout.ts cannot drift apart: the rooms ("May import") and the tables ("Owner").
import { roomOf } from './rules.js';

/** The cells of the rows of the markdown table whose header row starts with `| ${first} |`. */
function tableRows(doc: string, first: string): string[][] {
  const lines = doc.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`| ${first} |`));
  if (start < 0) throw new Error(`docs/architecture.md has no table headed "${first}"`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

const codeSpans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** Room -> what it may import, from the "May import" column (`room (types)` is `room:types`). */
export function documentedRooms(doc: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const cells of tableRows(doc, 'Room')) {
    const place = codeSpans(cells[0]!)[0]!;
    const room = roomOf(place.endsWith('/') ? `${place}x.ts` : place);
    if (room === 'root') continue;
    const mayImport = cells[cells.length - 1]!;
    out[room] = /^(nothing|the `xstate` package only)$/.test(mayImport)
      ? []
      : mayImport.split(',').map((item) => item.trim().replace(/^(\S+) \(types\)$/, '$1:types'));
  }
  return out;
}

/** Table -> owning room, from the table of tables. */
export function documentedOwners(doc: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const cells of tableRows(doc, 'Owner')) for (const table of codeSpans(cells[1]!)) out[table] = cells[0]!;
  return out;
}
