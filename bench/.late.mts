import { runBench } from './src/bench.ts';
import { renderTables } from './src/report.ts';
const run = await runBench({ quick: true, scenarios: ['stream'], contenders: ['flight-ioredis', 'flight-node-redis'], stream: { firstChunkAfterMs: Number(process.argv[2] ?? 1500) } });
console.log(renderTables(run.rows, false));
