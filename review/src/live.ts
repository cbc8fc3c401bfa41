import {
  ReviewSessionEventsDocument, ReviewSettlementsDocument,
  type ReviewSessionEventsSubscription, type ReviewSettlementsSubscription,
} from '../../client/index.js';
import { gateway } from './api.js';

type Settlement = ReviewSettlementsSubscription['executionSettled'];
type SessionEvent = ReviewSessionEventsSubscription['sessionEvents'];

function failed(e: unknown) {
  document.dispatchEvent(new CustomEvent('live-error', { detail: e }));
}

/**
 * Settlements after `after` (of one session, or all the token sees), replayed then live. The typed
 * client keeps `after` at the last cursor received, so a dropped connection resumes without a gap.
 */
export function settlementStream(sessionID: string | null, after: string | null, onEvent: (e: Settlement) => void): () => void {
  const seen = new Set<string>();
  return gateway().subscribe(ReviewSettlementsDocument, { sessionID, after }, {
    next: (d) => {
      const ev = d.executionSettled;
      if (seen.has(ev.cursor)) return;
      seen.add(ev.cursor);
      document.dispatchEvent(new CustomEvent('live-event', { detail: ev }));
      onEvent(ev);
    },
    error: failed,
  });
}

/** The session's journal after `after` (Session.eventsCursor of the page's read), replayed then live. */
export function sessionEventStream(sessionID: string, after: string, onEvent: (e: SessionEvent) => void): () => void {
  return gateway().subscribe(ReviewSessionEventsDocument, { sessionID, after }, {
    next: (d) => {
      document.dispatchEvent(new CustomEvent('live-event', { detail: d.sessionEvents }));
      onEvent(d.sessionEvents);
    },
    error: failed,
  });
}
