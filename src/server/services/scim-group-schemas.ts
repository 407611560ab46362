import { ROLES } from "../../contract/route.js";
import { SCIM_URN } from "../../contract/scim.js";
import type { ScimAttribute } from "./scim-attribute.js";

// The Group's schemas (RFC 7643 section 4.2 and bizctl's roles extension), and the User's
// read-only `groups` (section 4.1.2), as /Schemas describes them.

const attribute = (name: string, more: Partial<ScimAttribute> & { description: string }): ScimAttribute => ({
  name,
  type: "string",
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: "readWrite",
  returned: "default",
  uniqueness: "none",
  ...more,
});

const reference = (name: string, types: string[], description: string, mutability: ScimAttribute["mutability"]) =>
  attribute(name, { type: "reference", referenceTypes: types, description, mutability });

export const GROUP_ATTRIBUTES: ScimAttribute[] = [
  attribute("displayName", {
    description: "A human-readable name for the Group; unique case-insensitively.",
    required: true,
    uniqueness: "server",
  }),
  attribute("members", {
    type: "complex",
    multiValued: true,
    description: "The Users of the Group (no nesting); left out with excludedAttributes=members.",
    subAttributes: [
      attribute("value", { description: "The id of a User.", mutability: "immutable" }),
      attribute("display", { description: "The User's displayName, else its userName.", mutability: "readOnly" }),
      reference("$ref", ["User"], "The URI of the User.", "immutable"),
      attribute("type", {
        description: "User: the only kind of member.",
        canonicalValues: ["User"],
        mutability: "immutable",
      }),
    ],
  }),
];

export const GROUP_ROLE_ATTRIBUTES: ScimAttribute[] = [
  attribute("roles", {
    multiValued: true,
    description: "The bizctl roles the Group grants its members (admin, support, member); only an admin changes them.",
    canonicalValues: [...ROLES],
  }),
];

/** The User's `groups` (readOnly): the Groups it is a member of. */
export const USER_GROUPS_ATTRIBUTE = attribute("groups", {
  type: "complex",
  multiValued: true,
  mutability: "readOnly",
  description: "The Groups the User is a member of; changed through /Groups.",
  subAttributes: [
    attribute("value", { description: "The id of the Group.", mutability: "readOnly" }),
    reference("$ref", ["Group"], "The URI of the Group.", "readOnly"),
    attribute("display", { description: "The Group's displayName.", mutability: "readOnly" }),
    attribute("type", {
      description: "direct: bizctl has no nested groups.",
      canonicalValues: ["direct"],
      mutability: "readOnly",
    }),
  ],
});

export const groupSchemaDefinitions = () => [
  { id: SCIM_URN.group, name: "Group", description: "Group", attributes: GROUP_ATTRIBUTES },
  {
    id: SCIM_URN.groupRoles,
    name: "GroupRoles",
    description: "bizctl's extension of the Group: the roles it grants its members",
    attributes: GROUP_ROLE_ATTRIBUTES,
  },
];
