import type { UserConfig } from 'vitest/config';
export function sourceAliases(): { find: RegExp; replacement: string }[];
export function flightProject(name: string, overrides?: Record<string, unknown>): UserConfig;
