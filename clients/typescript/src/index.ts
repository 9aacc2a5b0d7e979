export {
  createWorkflowClient,
  type RunInfo,
  type SignalOutcome,
  type StartOptions,
  type Started,
  type WorkflowClient,
  type WorkflowRef,
} from "./client.js";
export { type Duration } from "./duration.js";
export * from "./errors.js";
export { type ServerOptions } from "./http.js";
export * from "./runtime.js";
