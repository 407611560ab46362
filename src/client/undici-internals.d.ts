// Declarations for the two undici modules imported directly (see http-transport.ts).
declare module "undici/lib/dispatcher/pool.js" {
  import type { Pool } from "undici";

  const PoolClass: typeof Pool;
  export default PoolClass;
}

declare module "undici/lib/api/api-request.js" {
  import type { Dispatcher } from "undici";

  function request(this: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  export default request;
}
