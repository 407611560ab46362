import type { Context } from "../../../cli/command-context.js";
import { ApiError } from "../../../client/errors.js";
import * as resources from "../../../contract/resources.js";

export const CONSUMER_TYPE = "OAuthConsumer";
export const CONSUMER_COLUMNS = ["id", "name", "consumerKey", "callbackUrls", "created"];

/** A consumer resource as the CLI shows it: the attributes that matter, its creation time. */
export function describeConsumer(resource: Record<string, unknown>): Record<string, unknown> {
  const meta = resource.meta as { created?: string } | undefined;
  return {
    id: resource.id,
    name: resource.name,
    consumerKey: resource.consumerKey,
    callbackUrls: resource.callbackUrls ?? [],
    ...(resource.displayName !== undefined && { displayName: resource.displayName }),
    signatureMethod: typeof resource.publicKey === "string" ? "RSA-SHA1" : "HMAC",
    created: meta?.created,
  };
}

/** GET /Resources/ID restricted to consumers, so that another kind of resource is a 404 here. */
export async function getConsumer(ctx: Context, id: string) {
  const client = await ctx.client();
  try {
    return await client.call(resources.getResource, {
      params: { resourceId: id },
      query: { resourcetypes: CONSUMER_TYPE },
    });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw new ApiError(404, { ...error.problem, detail: `No OAuth consumer with id ${id}.` });
    }
    throw error;
  }
}
