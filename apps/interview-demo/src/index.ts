export { STAGES, STAGE_NAMES, stagePolicies, type StageName } from './stages.js';
export { InterviewAiInvoker, type AiAnswer, type StageResult } from './invoker.js';
export { createModelClients, type ModelClients, type ModelClientOptions } from './model-clients.js';
export { startFakeModel, fakeAnswer, type FakeModel, type FakeModelStats } from '@flight/fake-model';
export { createCoordination, type Coordination } from './coordination.js';
export { configFromEnv, startNode, type NodeConfig, type DemoNode } from './node.js';
