import type { GatewayClient } from '@agent-history/client';

export interface Review {
  settlement: { cursor: string; executionID: string; sessionID: string; status: string };
  changeset: any;
  continuity: { __typename: string } & Record<string, unknown>;
  /** The seal's answer (SessionSealed, or a tagged error) when the plugin sealed a worker session. */
  sealed: ({ __typename?: string; _tag?: string } & Record<string, unknown>) | null;
}

export function reviewSettlements(
  gw: GatewayClient,
  opts?: { sealWorkers?: boolean; after?: string | null; onReview?: (r: Review) => void; onError?: (e: unknown) => void },
): () => void;

export const GatewayReview: (ctx: { client?: unknown }) => Promise<Record<string, never>>;
