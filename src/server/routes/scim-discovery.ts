import type { FastifyInstance } from "fastify";
import * as contract from "../../contract/scim-discovery.js";
import * as discovery from "../services/scim-discovery.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

export function discoveryRoutes(app: FastifyInstance, ctx: ServiceContext, capabilities: discovery.Capabilities): void {
  registerRoute(app, ctx, contract.serviceProviderConfig, async () =>
    discovery.serviceProviderConfig(ctx, capabilities),
  );
  registerRoute(app, ctx, contract.listResourceTypes, async () => discovery.listResourceTypes(ctx));
  registerRoute(app, ctx, contract.getResourceType, async (request) =>
    discovery.getResourceType(ctx, request.params.name),
  );
  registerRoute(app, ctx, contract.listSchemas, async () => discovery.listSchemas(ctx));
  registerRoute(app, ctx, contract.getSchema, async (request) => discovery.getSchema(ctx, request.params.id));
}
