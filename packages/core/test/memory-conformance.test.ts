import { createMemoryCoordinator } from '@flight/core';
import { systemClock } from '@flight/core/adapter';
import { registerCoordinatorConformance } from '@flight/core/testing';

registerCoordinatorConformance({
  storesTraceparent: true,
  name: 'memory',
  create: (now) => ({ coordinator: createMemoryCoordinator({ clock: { ...systemClock, now } }) }),
  modelRuns: 300,
});
