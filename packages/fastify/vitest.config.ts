import { defineProject } from 'vitest/config';
import { flightProject } from '@flight/vitest-config';

// Type tests (`test/**/*.test-d.ts`) run by vitest's typecheck mode, with the package's tsconfig.
export default defineProject(
  flightProject('fastify', { typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: 'tsconfig.json' } }),
);
