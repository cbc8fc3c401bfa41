#!/usr/bin/env -S npx tsx
import { parseArgs } from 'node:util';
import { openDatabase } from '../db/index.js';
import { connect } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { createToken, ensureAdminToken, revokeToken } from '../domain/tokens.js';

const USAGE = `Usage: gateway <command>

  serve                                   run the gateway (PORT, default 4000; DATABASE_URL or embedded Postgres)
  migrate                                 apply pending schema migrations
  token create --role <role> [--directory <prefix>] [--label <text>]
                                          create a bearer token (admin, host, plugin, reader) and print it once
  token revoke <tokenID>                  revoke a token
  replay [--verify]                       rebuild the message and part projections from the journal; with
                                          --verify, replay into a scratch schema and compare (changes nothing)
  demo [--url <graphql url>] --token <host token> [--plugin-token <token>]
                                          drive a few sessions through the reference host against a running gateway
  bridge opencode --url <OpenCode URL> [--gateway <graphql url>] --token <host token> [--plugin-token <token>]
                                          mirror an OpenCode server's sessions into the gateway and act on it
  bridge opencode --serve [--directory <dir>] [--listen 127.0.0.1:4096] --password <p> [--gateway …] --token …
                                          run OpenCode privately behind the gateway's admission proxy (its clients
                                          use --listen with the password): a seal is then proven (SessionSealed)
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
  // Imported here so the other commands start without loading the whole schema.
  const { buildApp } = await import('../server/app.js');
  const app = buildApp({ sql, port: Number(process.env.PORT ?? 4000), host: process.env.HOST ?? '127.0.0.1' });
  await app.start();
  const admin = await ensureAdminToken(sql);
  console.log(`gateway listening on ${app.url} (WebSocket ${app.wsUrl})${db.embedded ? ' with embedded PostgreSQL in .data/pg' : ''}`);
  console.log(`GraphiQL: ${app.url}`);
  console.log(`Review page: ${app.url.replace(/\/graphql$/, '/review/')} (a reader token is enough)`);
  // Built now when missing or stale, rather than at its first visitor's request.
  import('../server/review.js').then((m) => m.ensureReviewBuilt()).catch((e) => console.error('review page build failed:', e));
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
    case 'replay': {
      const { values } = parseArgs({ args: rest, options: { verify: { type: 'boolean' } } });
      const { compareProjections, rebuildProjections, replayIntoSchema } = await import('../domain/replay.js');
      await withDb(async (sql) => {
        if (!values.verify) {
          const s = await rebuildProjections(sql);
          console.log(`rebuilt from ${s.events} events of ${s.sessions} sessions: ${s.messages} messages, ${s.parts} parts`
            + ` (rows deleted ${s.changed.deleted}, updated ${s.changed.updated}, inserted ${s.changed.inserted})`);
          return;
        }
        const s = await replayIntoSchema(sql, 'replay_check');
        const diffs = await compareProjections(sql, 'replay_check');
        await sql`DROP SCHEMA replay_check CASCADE`;
        console.log(`replayed ${s.events} events of ${s.sessions} sessions: ${s.messages} messages, ${s.parts} parts`);
        for (const d of diffs) console.log(`differs: ${d.table} ${d.id}\n  live:     ${JSON.stringify(d.live)}\n  replayed: ${JSON.stringify(d.replayed)}`);
        // Thrown, not process.exitCode: an exit hook of the embedded server's library resets the code.
        if (diffs.length) throw new Error(`${diffs.length}${diffs.length >= 20 ? '+' : ''} rows differ from the journal`);
        console.log('projections match the journal');
      });
      return;
    }
    case 'demo': {
      const { runDemo } = await import('../host/demo.js');
      return runDemo(rest);
    }
    case 'bridge': {
      const { runBridgeCommand } = await import('../bridge/opencode/cli.js');
      return runBridgeCommand(rest);
    }
  }
  process.stdout.write(USAGE);
  if (cmd && cmd !== 'help' && cmd !== '--help') process.exitCode = 2;
}

main().then(
  // One-shot commands end here, with their exit code (a library's exit hook would reset process.exitCode);
  // serve and bridge keep running until a signal.
  () => { if (!['serve', 'bridge'].includes(process.argv[2])) process.exit(process.exitCode ?? 0); },
).catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
