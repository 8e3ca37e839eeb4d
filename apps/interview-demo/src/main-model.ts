/** Entry point of the fake model process: `pnpm --filter @flight/interview-demo start:model`. */
import { exitWithParent } from './exit-with-parent.js';
import { startFakeModel } from '@flight/fake-model';
import { exitIfPortTaken } from './port-taken.js';

const port = Number(process.env.MODEL_PORT ?? 8090);
const latencyMs = Number(process.env.MODEL_LATENCY_MS ?? 300);
const tokensPerSecond = Number(process.env.MODEL_TOKENS_PER_SEC ?? 40);
const model = await startFakeModel({ port, latencyMs, tokensPerSecond, host: process.env.MODEL_HOST ?? '127.0.0.1' }).catch(
  exitIfPortTaken,
);
console.log(
  JSON.stringify({ level: 30, time: Date.now(), msg: 'fake model listening', url: `${model.url}/v1`, latencyMs, tokensPerSecond }),
);

const stop = () => {
  const exit = () => process.exit(0);
  model.close().then(exit, exit);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
exitWithParent(stop);
