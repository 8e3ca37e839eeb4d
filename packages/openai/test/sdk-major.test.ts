/** The suite runs against the openai major asked for: 6 by default, 7 with `FLIGHT_OPENAI_MAJOR=7` (Node >= 22). */
import { VERSION } from 'openai/version';
import { expect, it } from 'vitest';

it(`runs against openai ${process.env.FLIGHT_OPENAI_MAJOR ?? '6'}`, () => {
  expect(VERSION.split('.')[0]).toBe(process.env.FLIGHT_OPENAI_MAJOR ?? '6');
});
