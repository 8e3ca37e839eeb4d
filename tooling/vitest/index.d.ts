import type { UserConfig } from 'vitest/config';
export const SOURCE_CONDITION: string;
export function flightProject(name: string, overrides?: Record<string, unknown>): UserConfig;
