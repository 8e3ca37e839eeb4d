import type { FlightMeta } from '@flight/core/adapter';

/** A RUNNING run's meta, as a fresh acquire gives it (every time 0, no error, no result), with `fields` over it. */
export function runningMeta(fields: Partial<FlightMeta> = {}): FlightMeta {
  return {
    status: 'RUNNING',
    stage: 's',
    requestKey: 'k',
    sessionId: '',
    ownerId: 'node',
    ownerToken: 'token',
    epoch: 0,
    takeovers: 0,
    followers: 0,
    createdAt: 0,
    updatedAt: 0,
    heartbeatAt: 0,
    expireAt: 0,
    deadlineAt: 0,
    retryable: false,
    errorType: '',
    errorCode: '',
    errorMessage: '',
    resultRef: '',
    nonce: '0123456789abcdef',
    forgottenEpoch: 0,
    ...fields,
  };
}
