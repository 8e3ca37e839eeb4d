export { STAGES, STAGE_NAMES, stagePolicies, type StageName } from './stages.js';
export { InterviewAiInvoker, type AiAnswer } from './invoker.js';
export { createModelClient, ModelCallError, type ModelClient, type ChatMessage } from './model-client.js';
export { startFakeModel, fakeAnswer, type FakeModel, type FakeModelStats } from '@flight/fake-model';
export { createCoordination, type Coordination } from './coordination.js';
export { configFromEnv, startNode, type NodeConfig, type DemoNode } from './node.js';
