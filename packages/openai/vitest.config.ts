import { defineProject } from 'vitest/config';
import { flightProject } from '@flight/vitest-config';

/**
 * `FLIGHT_OPENAI_MAJOR=7` runs the same tests against openai 7 (installed as `openai-7`; it needs Node >= 22),
 * every `openai` import of the source and the tests resolved to it.
 */
const openai7 = process.env.FLIGHT_OPENAI_MAJOR === '7';

export default defineProject({
  ...flightProject('openai'),
  ...(openai7 ? { resolve: { alias: [{ find: /^openai(?=\/|$)/, replacement: 'openai-7' }] } } : {}),
});
