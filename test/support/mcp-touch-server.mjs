// A minimal MCP server over stdio (newline-delimited JSON-RPC), for the Codex host's tests: one tool,
// `touch_file {path}`, which creates the file and answers "touched <path>".
import fs from 'node:fs';
import readline from 'node:readline';

const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined) return; // a notification
  if (m.method === 'initialize') {
    send({ id: m.id, result: { protocolVersion: m.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'testmcp', version: '1.0.0' } } });
  } else if (m.method === 'tools/list') {
    send({ id: m.id, result: { tools: [{ name: 'touch_file', description: 'Creates an empty file', inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }] } });
  } else if (m.method === 'tools/call') {
    const p = String(m.params?.arguments?.path ?? '');
    try { fs.writeFileSync(p, ''); send({ id: m.id, result: { content: [{ type: 'text', text: `touched ${p}` }] } }); } catch (e) {
      send({ id: m.id, result: { content: [{ type: 'text', text: String(e) }], isError: true } });
    }
  } else send({ id: m.id, error: { code: -32601, message: `no method ${m.method}` } });
});
