// The bridges' state file is bridge/common/store.ts (shared with the hooks-driven hosts); here with the rows the
// OpenCode bridge keeps (its mapping state per OpenCode session).
import * as common from '../common/store.js';
import type { SessionState } from './mapping.js';

export type StoredSession = common.StoredSession<SessionState>;
export type StoredMessage = common.StoredMessage;
export type BridgeStore = common.BridgeStore<SessionState>;
export type FileShape = common.FileShape<SessionState>;
export class FileBridgeStore extends common.FileBridgeStore<SessionState> {}
