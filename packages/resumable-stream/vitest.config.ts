import { defineProject } from 'vitest/config';
import { flightProject } from '@flight/vitest-config';

export default defineProject(flightProject('resumable-stream'));
