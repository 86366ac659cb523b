import pg from 'pg';
import { startTestGateway } from '../support/gateway-harness.js';
import { createScratchDatabase, requireService } from '../support/services.js';

const baseUrl = requireService('DATABASE_URL');
const describeWithPostgres = baseUrl ? describe : describe.skip;

/**
 * Readers only see transactions below the snapshot's xmin, and xids are cluster-wide: any open write
 * transaction on the server (even in another database) holds back what projections can read. Applying a
 * configuration must then wait for its own events instead of deciding on a stale snapshot.
 */
describeWithPostgres('read-your-writes on a busy PostgreSQL server', () => {
  test('applying a configuration waits for its own events while another transaction holds back visibility', async () => {
    const gatewayDb = await createScratchDatabase(baseUrl!);
    const otherDb = await createScratchDatabase(baseUrl!);
    const blocker = new pg.Client({ connectionString: otherDb.url });
    await blocker.connect();
    try {
      await blocker.query('CREATE TABLE busy (n int)');
      await blocker.query('BEGIN');
      await blocker.query('INSERT INTO busy VALUES (1)'); // takes an xid and keeps it until COMMIT
      const release = setTimeout(() => void blocker.query('COMMIT'), 1500);
      const started = Date.now();
      const gw = await startTestGateway({ databaseUrl: gatewayDb.url });
      clearTimeout(release);
      try {
        expect(Date.now() - started).toBeGreaterThanOrEqual(1000); // it waited for the blocker
        const response = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${gw.key}` } });
        expect(response.status).toBe(200);
      } finally {
        await gw.close();
      }
    } finally {
      await blocker.query('COMMIT').catch(() => undefined);
      await blocker.end();
      await gatewayDb.drop();
      await otherDb.drop();
    }
  });
});
