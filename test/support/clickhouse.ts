import { randomBytes } from 'node:crypto';

export interface ScratchClickHouse {
  /** CLICKHOUSE_URL for the suite: the server plus a database of its own (created by the gateway). */
  url: string;
  database: string;
  /** Rows of a SELECT (JSONEachRow; 64-bit integers arrive as strings). */
  rows<Row = Record<string, any>>(query: string): Promise<Row[]>;
  drop(): Promise<void>;
}

/** A database name of the suite's own on the ClickHouse server at `baseUrl`; dropped afterwards. */
export function scratchClickHouse(baseUrl: string): ScratchClickHouse {
  const database = `sy_test_${randomBytes(5).toString('hex')}`;
  const server = new URL(baseUrl);
  server.pathname = '/';
  const post = async (query: string) => {
    const response = await fetch(server, { method: 'POST', body: query });
    const text = await response.text();
    if (!response.ok) throw new Error(`ClickHouse: ${text}`);
    return text;
  };
  const url = new URL(server);
  url.pathname = `/${database}`;
  return {
    url: url.toString(),
    database,
    rows: async (query) => (await post(`${query} FORMAT JSONEachRow`)).split('\n').filter(Boolean).map((line) => JSON.parse(line)),
    drop: async () => void (await post(`DROP DATABASE IF EXISTS ${database}`)),
  };
}
