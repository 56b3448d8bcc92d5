// Who a verb acts for and under which configuration. Every verb of the broker takes
// (db, ctx, req): the database, this context (or the part of it the verb reads), and the request,
// checked at the edge (lib/http/requests/).
import type { Config } from '../config.js';

export interface BrokerContext {
  tenant: string;
  /** The principal's sub, stored as each pushed frame's producer sub. */
  sub: string | null;
  config: Config;
}

/** What a verb that reads stored payloads needs: the tenant, and the configuration for the encryption key. */
export type ReadContext = Pick<BrokerContext, 'tenant' | 'config'>;

/** What a verb that neither writes frames nor reads payloads needs. */
export type TenantContext = Pick<BrokerContext, 'tenant'>;
