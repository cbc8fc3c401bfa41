// The bridges' gateway client moved to bridge/common/gateway.ts (shared by the OpenCode bridge and the hooks-driven
// hosts, bridge/hooks-host/); re-exported here for the OpenCode bridge's modules and tests.
export * from '../common/gateway.js';
