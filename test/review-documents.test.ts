// The review page's queries stay within the gateway's own cost limit whatever a session holds: each reads
// pages of a fixed size (executions 20, messages and jobs 100, sessions a page the caller names, at most
// 100), so a session of 100 executions or of 10,000 costs the same per request. Checked with the gateway's
// cost function (server/limits.ts) over every operation of client/operations/review.graphql.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Kind, parse, validate } from 'graphql';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { DEFAULT_LIMITS, operationCost } from '../server/limits.js';
import { PROJECT_DIR } from '../db/index.js';
import { schema } from '../schema/index.js';

describe("the review page's queries", () => {
  const doc = parse(readFileSync(path.join(PROJECT_DIR, 'client', 'operations', 'review.graphql'), 'utf8'));
  const operations = doc.definitions.flatMap((d) => (d.kind === Kind.OPERATION_DEFINITION && d.name ? [d.name.value] : []));

  it('are all checked (the file has its operations)', () => {
    expect(operations).toEqual(expect.arrayContaining(['ReviewSessions', 'ReviewSession', 'ReviewTimeline', 'ReviewChangeset']));
  });

  for (const name of operations) {
    it(`${name} costs at most a tenth of the limit, with the largest page a caller may ask for`, () => {
      const cost = operationCost(doc, name, { first: 100 });
      expect(cost).toBeGreaterThan(0);
      expect(cost).toBeLessThanOrEqual(DEFAULT_LIMITS.maxCost / 10);
    });
  }

  it('are within the depth limit (MAX_DEPTH, counted as the gateway counts it: graphql-armor, fragments included)', () => {
    const found: string[] = [];
    const rule = maxDepthRule({ n: DEFAULT_LIMITS.maxDepth, ignoreIntrospection: true, propagateOnRejection: false, onReject: [(_ctx, e) => { found.push(e.message); }] });
    expect(validate(schema, doc, [rule])).toEqual([]);
    expect(found).toEqual([]);
  });
});
