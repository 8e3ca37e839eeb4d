import { createMemoryCoordinator, systemClock } from '@flight/core';
import { registerCoordinatorConformance } from '@flight/core/testing';

registerCoordinatorConformance({
  storesTraceparent: true,
  name: 'memory',
  create: (now) => ({ coordinator: createMemoryCoordinator({ clock: { ...systemClock, now } }) }),
  modelRuns: 300,
});
