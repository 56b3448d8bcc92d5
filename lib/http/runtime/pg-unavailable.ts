// Stands in for node-postgres in Workers bundles: workerd reaches PostgreSQL through the Neon
// driver only, and pg's TCP sockets would drag Node built-ins into the bundle.
class Pool {
  constructor() {
    throw new Error('node-postgres is not available on workerd; functions there use the Neon driver');
  }
}

export default { Pool };
