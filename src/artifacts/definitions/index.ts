// Every artifact resource, in the order they appear in the API description. Adding a resource is
// adding its definition here (and, when it needs an index or a constraint, a migration).
import type { ArtifactDefinition } from '../definition.js';
import { bugs } from './bugs.js';
import { tickets } from './tickets.js';
import { requirements } from './requirements.js';
import { specifications } from './specifications.js';
import { testCases } from './test-cases.js';
import { testPlans } from './test-plans.js';
import { testRuns } from './test-runs.js';
import { testResults } from './test-results.js';
import { releases } from './releases.js';
import { releasePlans } from './release-plans.js';
import { milestones } from './milestones.js';
import { kb } from './kb.js';
import { memories } from './memories.js';
import { notes } from './notes.js';
import { webhooksDefinition } from './webhooks.js';

const content: ArtifactDefinition[] = [
  bugs,
  tickets,
  requirements,
  specifications,
  testCases,
  testPlans,
  testRuns,
  testResults,
  releases,
  releasePlans,
  milestones,
  kb,
  memories,
  notes,
];

export const artifactDefinitions: readonly ArtifactDefinition[] = [...content, webhooksDefinition(content.map((d) => d.kind))];
