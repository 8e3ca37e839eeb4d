export { createResumableStreamContext, type CreateResumableStreamContextOptions } from './redis.js';
export type { ResumableStreamContext } from './types.js';
