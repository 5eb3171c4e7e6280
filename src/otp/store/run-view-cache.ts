// Finished runs, kept in memory as the JSON that GET /otp/runs/:id answers. A finished run's row and
// steps never change again; its evidence files can (an upload after the run, a delete), and every
// such change is announced to every process (a trigger on assets, db/migrations/005) and calls
// invalidate(). Bounded by the size of the JSON held, least recently read first out, and by age: a
// notice lost with a dropped connection leaves a stale view for at most `maxAgeMs`.

import { isFinalRunStatus } from '../../../machines/types.js';
import { JsonText } from '../../rest/route.js';
import type { RunView } from './run-views.js';

interface Entry {
  projectId: string;
  json: JsonText;
  /** When it was read from PostgreSQL (`now()`). */
  readAt: number;
}

export class RunViewCache {
  // A Map keeps insertion order: re-inserting on every hit makes its first key the least recently read.
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  // Bumped by every invalidation: a read that began before one may hold what it undid.
  private generation = 0;

  /** `maxBytes`: the most JSON held in all; 0 keeps nothing. `now`: the clock that ages the copies. */
  constructor(
    private readonly maxBytes: number,
    private readonly maxAgeMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The run's view as JSON: from memory when it is held (at once, not a promise: the hot path of a
   * poll), else from `load` (kept if the run has finished).
   */
  read(projectId: string, runId: string, load: () => Promise<RunView>): JsonText | Promise<JsonText> {
    const hit = this.entries.get(runId);
    // Another project's run is never answered from here: the load answers 404 for it.
    if (hit && hit.projectId === projectId && this.now() - hit.readAt < this.maxAgeMs) {
      this.entries.delete(runId);
      this.entries.set(runId, hit);
      return hit.json;
    }
    return this.load(projectId, runId, load);
  }

  private async load(projectId: string, runId: string, load: () => Promise<RunView>): Promise<JsonText> {
    const generation = this.generation;
    const readAt = this.now();
    const view = await load();
    const json = new JsonText(JSON.stringify(view));
    if (isFinalRunStatus(view.status) && generation === this.generation) this.put(runId, { projectId, json, readAt });
    return json;
  }

  invalidate(runId: string): void {
    this.generation++;
    this.remove(runId);
  }

  /** Forget every run (notices of evidence changes may have been missed). */
  clear(): void {
    this.generation++;
    this.entries.clear();
    this.bytes = 0;
  }

  get size(): { runs: number; bytes: number } {
    return { runs: this.entries.size, bytes: this.bytes };
  }

  private put(runId: string, entry: Entry): void {
    if (weight(entry) > this.maxBytes) return;
    this.remove(runId);
    this.entries.set(runId, entry);
    this.bytes += weight(entry);
    for (const oldest of this.entries.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.remove(oldest);
    }
  }

  private remove(runId: string): void {
    const entry = this.entries.get(runId);
    if (!entry) return;
    this.entries.delete(runId);
    this.bytes -= weight(entry);
  }
}

// UTF-16 code units: bytes in memory are about twice this for V8's two-byte strings, the same for
// one-byte (ASCII) ones, which JSON of runs nearly always is.
const weight = (entry: Entry) => entry.json.text.length;
