export {
  type Arm,
  type Fired,
  type RunState,
  type StepContext,
  type Steps,
  type WorkflowContext,
} from "./replay.js";
export { type RetryPolicy } from "./retry.js";
export { Worker, type WorkerOptions } from "./worker.js";
export { type Workflow, type WorkflowDefinition, workflow } from "./workflow.js";
