export { runBench, SCENARIOS, type BenchOptions, type BenchRun, type ScenarioName } from './bench.js';
export { CONTENDERS, availableContenders, createContender, type Contender, type ContenderName } from './contenders/index.js';
export { renderMarkdown, renderTables, verdicts, type Verdict } from './report.js';
export type { ResultRow } from './context.js';
