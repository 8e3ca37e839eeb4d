import { createMemoryCoordinator, systemClock } from '@flight/core';
import { registerCoordinatorConformance } from '@flight/core/testing';

registerCoordinatorConformance({
  name: 'memory',
  create: (now) => ({ coordinator: createMemoryCoordinator({ clock: { ...systemClock, now } }) }),
  modelRuns: 300,
});
