import { InvalidRequestError } from "./errors.js";

const WORKFLOW = /^[a-z0-9_][a-z0-9_-]{0,42}$/;
const STEP = /^[a-zA-Z0-9._-]{1,128}$/;
const EVENT = /^[A-Za-z0-9._:-]{1,128}$/;

/** The name, when it is a workflow's: 1 to 43 of a-z, 0-9, "_" and "-", not starting with "-". */
export function checkWorkflowName(name: string): string {
  if (typeof name !== "string" || !WORKFLOW.test(name)) {
    throw new InvalidRequestError(
      `workflow name ${JSON.stringify(name)} must be 1 to 43 characters of a-z, 0-9, "_" and "-", not starting with "-"`,
      { field: "name" },
    );
  }
  return name;
}

/** The name, when it is a step's: 1 to 128 of a-z, A-Z, 0-9, ".", "_" and "-". */
export function checkStepName(name: string): string {
  if (typeof name !== "string" || !STEP.test(name) || name.startsWith("__")) {
    throw new InvalidRequestError(
      `step name ${JSON.stringify(name)} must be 1 to 128 characters of a-z, A-Z, 0-9, ".", "_" and "-", not starting with "__"`,
      { field: "step" },
    );
  }
  return name;
}

/** The name, when it is an event's: 1 to 128 of A-Z, a-z, 0-9, ".", "_", ":" and "-". */
export function checkEventName(event: string): string {
  if (typeof event !== "string" || !EVENT.test(event)) {
    throw new InvalidRequestError(
      `event ${JSON.stringify(event)} must be 1 to 128 characters of A-Z, a-z, 0-9, ".", "_", ":" and "-"`,
      { field: "event" },
    );
  }
  return event;
}
