import pg from 'pg';

/**
 * A PostgreSQL connection of its own with the pool's settings (URL, schema, type parsers), not one of the pool's:
 * for what holds a session for long (the change feed's LISTEN, the settlement lease's advisory lock), which would
 * otherwise leave a pool of one with nothing to query with. `onError` hears of the connection's failures from the
 * moment it is created (an unheard 'error' would end the process); a failed connect ends it and rejects.
 */
export async function connectDedicatedClient(pool: pg.Pool, onError: (err: Error) => void): Promise<pg.Client> {
  const client = new pg.Client(pool.options);
  client.on('error', onError);
  try {
    await client.connect();
  } catch (err) {
    client.end().catch(() => {});
    throw err;
  }
  return client;
}
