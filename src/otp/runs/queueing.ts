// Where a new run stands in its project's queue (docs/queues.md): its owner is the credential that
// posts it (the OAuth client, else the API key), its group the one asked for or the owner, its class
// normal unless asked; the weights and the limit come from the project's settings.
import type { Principal } from '../../auth/principal.js';
import { errors } from '../../errors.js';
import type { QueuePolicy, RunQueueing } from '../queue/model.js';
import type { RunRequest } from './request.js';

export function queueingOf(principal: Principal, request: RunRequest, policy: QueuePolicy): RunQueueing {
  if (request.cancelRunning && !request.cancelInProgress) {
    throw errors.validation('cancelRunning needs cancelInProgress', [
      { field: 'body.cancelRunning', message: 'give cancelInProgress: true as well' },
    ]);
  }
  const owner = principal.clientId ?? principal.keyId;
  const group = request.group ?? owner;
  return {
    owner,
    group,
    priority: request.priority ?? 'normal',
    ownerWeight: policy.ownerWeights[owner] ?? null,
    weight: policy.groupWeights[group] ?? null,
    maxInFlight: policy.maxInFlight[group] ?? null,
  };
}
