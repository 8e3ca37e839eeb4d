/** Entry point of one demo node: `pnpm --filter @flight/interview-demo start:node`. */
import { configFromEnv, startNode } from './node.js';

const node = await startNode(configFromEnv());
let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  node.logger.info({ signal }, 'stopping');
  const force = setTimeout(() => process.exit(0), 3000);
  force.unref();
  node.close().finally(() => process.exit(0));
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
process.on('unhandledRejection', (error) => node.logger.error({ err: error }, 'unhandled rejection'));
