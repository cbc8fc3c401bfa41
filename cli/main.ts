#!/usr/bin/env -S npx tsx
import { parseArgs } from 'node:util';
import { openDatabase } from '../db/index.js';
import { connect } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { createToken, ensureAdminToken, revokeToken } from '../domain/tokens.js';
import { buildApp } from '../server/app.js';

const USAGE = `Usage: gateway <command>

  serve                                   run the gateway (PORT, default 4000; DATABASE_URL or embedded Postgres)
  migrate                                 apply pending schema migrations
  token create --role <role> [--directory <prefix>] [--label <text>]
                                          create a bearer token (admin, host, plugin, reader) and print it once
  token revoke <tokenID>                  revoke a token
  demo [--url <graphql url>] --token <host token> [--plugin-token <token>]
                                          drive a few sessions through the reference host against a running gateway
`;

async function withDb<T>(fn: (sql: ReturnType<typeof connect>) => Promise<T>): Promise<T> {
  const db = await openDatabase();
  const sql = connect(db.url, { max: 2 });
  try {
    await migrate(sql);
    return await fn(sql);
  } finally {
    await sql.end();
    await db.stop();
  }
}

async function serve() {
  const db = await openDatabase();
  const sql = connect(db.url, { max: Number(process.env.DB_POOL ?? 20) });
  const applied = await migrate(sql);
  if (applied.length) console.log(`migrations applied: ${applied.join(', ')}`);
  const app = buildApp({ sql, port: Number(process.env.PORT ?? 4000), host: process.env.HOST ?? '127.0.0.1' });
  await app.start();
  const admin = await ensureAdminToken(sql);
  console.log(`gateway listening on ${app.url} (WebSocket ${app.wsUrl})${db.embedded ? ' with embedded PostgreSQL in .data/pg' : ''}`);
  console.log(`GraphiQL: ${app.url}`);
  if (admin) {
    console.log(`\nFirst start: an admin token was created. It is shown only this once:\n\n  ${admin.secret}\n`);
    console.log(`Use it as "Authorization: Bearer <token>" (in GraphiQL's Headers tab).`);
  }
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    console.log('stopping…');
    await app.stop();
    await sql.end({ timeout: 5 });
    await db.stop();
    process.exit(0);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

async function main() {
  const [cmd, ...rest] = process.argv.slice(2);
  switch (cmd) {
    case 'serve':
      return serve();
    case 'migrate': {
      const applied = await withDb((sql) => migrate(sql));
      console.log(applied.length ? `applied: ${applied.join(', ')}` : 'up to date');
      return;
    }
    case 'token': {
      const [sub, ...args] = rest;
      if (sub === 'create') {
        const { values } = parseArgs({ args, options: { role: { type: 'string' }, directory: { type: 'string' }, label: { type: 'string' } } });
        if (!values.role) throw new Error('--role is required');
        const t = await withDb((sql) => createToken(sql, { role: values.role!, directory: values.directory, label: values.label }));
        console.log(`token ${t.id} (${t.role}${t.directory ? `, under ${t.directory}` : ''}):\n${t.secret}`);
        return;
      }
      if (sub === 'revoke' && args[0]) {
        const ok = await withDb((sql) => revokeToken(sql, args[0]));
        console.log(ok ? `revoked ${args[0]}` : `no active token ${args[0]}`);
        if (!ok) process.exitCode = 1;
        return;
      }
      break;
    }
    case 'demo': {
      const { runDemo } = await import('../host/demo.js');
      return runDemo(rest);
    }
  }
  process.stdout.write(USAGE);
  if (cmd && cmd !== 'help' && cmd !== '--help') process.exitCode = 2;
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
