// `gateway bridge opencode --url http://127.0.0.1:N [--gateway URL] --token T [--plugin-token P] [--state FILE] [--opencode-data DIR]`
import { parseArgs } from 'node:util';
import path from 'node:path';
import { OpencodeBridge } from './bridge.js';
import { FileBridgeStore, PgBridgeStore, type BridgeStore } from './store.js';

export async function runBridgeCommand(args: string[]): Promise<void> {
  const [target, ...rest] = args;
  if (target !== 'opencode') throw new Error('usage: bridge opencode --url <OpenCode URL> --token <host token> [--plugin-token <token>]');
  const { values } = parseArgs({
    args: rest,
    options: {
      url: { type: 'string' }, gateway: { type: 'string' }, token: { type: 'string' }, 'plugin-token': { type: 'string' },
      state: { type: 'string' }, 'opencode-data': { type: 'string' }, 'fence-dir': { type: 'string' }, 'opencode-password': { type: 'string' }, 'lease-ms': { type: 'string' },
    },
  });
  if (!values.url) throw new Error('--url (the OpenCode server) is required');
  const token = values.token ?? process.env.GATEWAY_TOKEN;
  if (!token) throw new Error('--token (a host or admin token) is required');
  const server = values.url.replace(/\/+$/, '');
  let store: BridgeStore;
  if (values.state || !process.env.DATABASE_URL) {
    store = new FileBridgeStore(values.state ?? path.join('.data', `bridge-opencode-${Buffer.from(server).toString('base64url')}.json`));
  } else {
    const { connect } = await import('../../db/connection.js');
    const { migrate } = await import('../../db/migrate.js');
    const sql = connect(process.env.DATABASE_URL, { max: 2 });
    await migrate(sql);
    store = new PgBridgeStore(sql, server, true);
  }
  const bridge = new OpencodeBridge({
    opencodeUrl: server,
    opencodePassword: values['opencode-password'] ?? process.env.OPENCODE_SERVER_PASSWORD,
    gatewayUrl: values.gateway ?? process.env.GATEWAY_URL ?? 'http://127.0.0.1:4000/graphql',
    hostToken: token,
    pluginToken: values['plugin-token'] ?? token,
    store,
    opencodeDataDir: values['opencode-data'],
    fenceDir: values['fence-dir'],
    leaseMs: values['lease-ms'] ? Number(values['lease-ms']) : undefined,
    log: (m) => console.error(`[bridge] ${m}`),
  });
  await bridge.start();
  console.log(`bridging OpenCode ${server} as host ${bridge.hostID}`);
  const shutdown = async () => {
    await bridge.stop();
    await store.close();
    process.exit(0);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}
