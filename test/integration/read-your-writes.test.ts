import pg from 'pg';
import { startTestGateway } from '../support/gateway-harness.js';
import { createScratchDatabase, requireService } from '../support/services.js';

const baseUrl = requireService('DATABASE_URL');
const describeWithPostgres = baseUrl ? describe : describe.skip;

/**
 * Readers only see transactions below the oldest write transaction still open in the gateway's own
 * database (transactions of other databases on the server cannot append to its log and are not waited
 * for). Applying a configuration must then wait for its own events instead of deciding on a stale
 * snapshot.
 */
describeWithPostgres('read-your-writes on a busy PostgreSQL server', () => {
  test('applying a configuration waits for its own events while another transaction holds back visibility', async () => {
    const gatewayDb = await createScratchDatabase(baseUrl!);
    const otherDb = await createScratchDatabase(baseUrl!);
    // The blocker writes in the gateway's own database: it could be appending to the log.
    const blocker = new pg.Client({ connectionString: gatewayDb.url });
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

  test('an open write transaction in another database on the server does not hold the start back', async () => {
    const gatewayDb = await createScratchDatabase(baseUrl!);
    const otherDb = await createScratchDatabase(baseUrl!);
    const neighbour = new pg.Client({ connectionString: otherDb.url });
    await neighbour.connect();
    try {
      await neighbour.query('CREATE TABLE busy (n int)');
      await neighbour.query('BEGIN');
      await neighbour.query('INSERT INTO busy VALUES (1)');
      const gw = await startTestGateway({ databaseUrl: gatewayDb.url }); // would time out if it waited for the neighbour
      try {
        const response = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${gw.key}` } });
        expect(response.status).toBe(200);
      } finally {
        await gw.close();
      }
    } finally {
      await neighbour.query('ROLLBACK').catch(() => undefined);
      await neighbour.end();
      await gatewayDb.drop();
      await otherDb.drop();
    }
  });
});
