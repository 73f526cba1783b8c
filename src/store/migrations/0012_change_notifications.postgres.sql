-- PostgreSQL only (SQLite's caches read PRAGMA data_version instead): every committed write to what the services
-- cache (credentials, dApps and their keys, webhooks, policies) notifies channel patron_changes, so every other
-- process drops its cached copies within milliseconds (src/store/db/changeFeed.ts). NOTIFY is delivered on commit;
-- notifications alike within one transaction are delivered once. A token's last_used_at (touched at most once a
-- minute) does not notify: only a token created, revoked or deleted does.
CREATE OR REPLACE FUNCTION patron_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('patron_changes', TG_TABLE_NAME);
  RETURN NULL;
END
$$;

CREATE TRIGGER patron_changes_accounts AFTER INSERT OR UPDATE OR DELETE ON accounts
  FOR EACH STATEMENT EXECUTE FUNCTION patron_notify_change();
CREATE TRIGGER patron_changes_auth_tokens AFTER INSERT OR DELETE OR UPDATE OF revoked_at ON auth_tokens
  FOR EACH STATEMENT EXECUTE FUNCTION patron_notify_change();
CREATE TRIGGER patron_changes_dapps AFTER INSERT OR UPDATE OR DELETE ON dapps
  FOR EACH STATEMENT EXECUTE FUNCTION patron_notify_change();
CREATE TRIGGER patron_changes_webhooks AFTER INSERT OR UPDATE OR DELETE ON webhooks
  FOR EACH STATEMENT EXECUTE FUNCTION patron_notify_change();
CREATE TRIGGER patron_changes_policies AFTER INSERT OR UPDATE OR DELETE ON policies
  FOR EACH STATEMENT EXECUTE FUNCTION patron_notify_change();
