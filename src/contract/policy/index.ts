/**
 * The access policy (spec section 1's roles table, least privilege and the last admin; 1.7's token
 * scopes): who may do which operation on whom, and the words of a refusal. Pure: the server
 * enforces it, the CLI asks it before a question, and `access explain` prints its reasons.
 */
export * from "./addresses.js";
export * from "./decide.js";
export * from "./effective-roles.js";
export * from "./gate.js";
export * from "./issued.js";
export * from "./last-admin.js";
export * from "./operations.js";
export { DELEGATED_REFUSAL } from "./words.js";
