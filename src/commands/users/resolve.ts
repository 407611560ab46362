// the lookup every group of commands shares lives at the root of commands/
export { resolveUser, rolesOf, type UserRecord } from "../user-reference.js";
