-- The OpenCode bridge keeps its state in a file of its own (bridge/opencode/store.ts) and never
-- opens the gateway's database. The tables of 006 are no longer written or read by the gateway or the
-- bridge. They are kept, not dropped: an install upgraded from a version that used them still holds
-- its bridge's cursors and message map there, which `gateway bridge opencode --import-state-from <this
-- database URL>` copies into the bridge's state file once (without it the bridge would register as a
-- new host and the gateway would refuse its replay). A later migration may drop them once empty.
COMMENT ON TABLE bridge_opencode_hosts IS 'Retired (migration 050): read only by `gateway bridge opencode --import-state-from`.';
COMMENT ON TABLE bridge_opencode_sessions IS 'Retired (migration 050): read only by `gateway bridge opencode --import-state-from`.';
COMMENT ON TABLE bridge_opencode_messages IS 'Retired (migration 050): read only by `gateway bridge opencode --import-state-from`.';
