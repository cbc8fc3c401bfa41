import { readFileSync } from 'node:fs';
import { buildSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { printGatewaySchema } from '../schema/index.js';

describe('schema.graphql', () => {
  it('is the schema the server runs (run `npm run codegen` when this fails)', () => {
    const committed = readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8');
    const normalize = (sdl: string) => printSchema(lexicographicSortSchema(buildSchema(sdl)));
    expect(normalize(committed)).toBe(normalize(printGatewaySchema()));
  });

  it('spells the contract\'s public names', () => {
    const sdl = printGatewaySchema();
    for (const name of [
      'type Session', 'type Execution', 'type Job', 'type Message', 'interface Part', 'type TextPart', 'type ToolPart',
      'type FilePart', 'interface Error', 'type SessionNotFoundError', 'type SessionBusyError', 'type SessionSealedError',
      'type InvalidRequestError', 'type MessageNotFoundError', 'type PartNotFoundError', 'union Continuity',
      'type ContinuityContinuous', 'type ContinuityBroken', 'type ContinuityUnknown', 'type SettlementEvent',
      'enum SessionStatus', 'enum ExecutionStatus', 'enum JobStatus',
    ]) expect(sdl).toContain(name);
  });
});
