import { expect, it } from 'vitest';
import { isId, kindOf, newId, sessionOf, SESSION_KINDS } from '../domain/ids.js';

/** IDs of a session's rows carry their session: a by-ID read names the session's shard. */
it('a session row\'s ID carries its session, keeps its prefix and sorts in creation order within the session', () => {
  const session = newId('session');
  expect(isId('session', session)).toBe(true);
  expect(sessionOf(session)).toBeNull(); // a session is its own key, not a row of another
  for (const kind of SESSION_KINDS) {
    const ids = Array.from({ length: 50 }, () => newId(kind, session));
    for (const id of ids) {
      expect(isId(kind, id)).toBe(true);
      expect(kindOf(id)).toBe(kind);
      expect(sessionOf(id)).toBe(session);
    }
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  }
  // Another session's rows name that session.
  const other = newId('session');
  expect(sessionOf(newId('execution', other))).toBe(other);
});

it('an ID of the old shape (made before IDs carried their session) names no session; a row kind needs its session', () => {
  expect(sessionOf('exe_0192f3a4b5c6d000AbCdEfGhIjKl')).toBeNull();
  expect(sessionOf('hst_0192f3a4b5c6d000AbCdEfGhIjKl')).toBeNull();
  expect(sessionOf('not an id')).toBeNull();
  expect(() => newId('execution', 'bogus')).toThrow(/session/);
  expect(() => (newId as (k: string) => string)('message')).toThrow(/session/);
});
