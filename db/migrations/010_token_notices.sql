-- Every change to a token that can change who it authenticates as (revoked, role, directory scope,
-- secret) or removes it sends the token notice `{k:'t', id}` on the gateway's channel, delivered at
-- commit. Each instance's token cache drops the token and its WebSocket connections are re-checked,
-- whether the change came through `revokeToken` or a manual UPDATE/DELETE by an operator.
CREATE FUNCTION gateway_token_notice() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('gateway_events', json_build_object('k', 't', 'id', OLD.id)::text);
  RETURN NULL;
END $$;

CREATE TRIGGER tokens_notice AFTER UPDATE OF revoked_at, role, directory, hash OR DELETE ON tokens
  FOR EACH ROW EXECUTE FUNCTION gateway_token_notice();
