-- SQLite only (PostgreSQL notifies instead, 0012): a counter every committed write to what the services cache
-- (credentials, dApps and their keys, webhooks, policies) moves, so every process's caches see another's change by
-- reading one row (src/store/store.ts). PRAGMA data_version, read before, moved on any other connection's commit,
-- including the request log's own writer thread (src/requestLog/requestLogThread.ts): every cache emptied every
-- 100 ms for rows no cache holds. A token's last_used_at does not move it: only a token created, revoked or deleted.
CREATE TABLE patron_change_counter (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  generation INTEGER NOT NULL
);
INSERT INTO patron_change_counter (id, generation) VALUES (1, 0);
CREATE TRIGGER patron_changes_accounts_insert AFTER INSERT ON accounts BEGIN UPDATE patron_change_counter SET generation = generation + 1 WHERE id = 1; END;
CREATE TRIGGER patron_changes_accounts_update AFTER UPDATE ON accounts BEGIN UPDATE patron_change_counter SET generation = generation + 1 WHERE id = 1; END;
CREATE TRIGGER patron_changes_accounts_delete AFTER DELETE ON accounts BEGIN UPDATE patron_change_counter SET generation = generation + 1 WHERE id = 1; END;
CREATE TRIGGER patron_changes_dapps_insert AFTER INSERT ON dapps BEGIN UPDATE patron_change_counter SET generation = generation + 1 WHERE id = 1; END;
CREATE TRIGGER patron_changes_dapps_update AFTER UPDATE ON dapps BEGIN UPDATE patron_change_counter SET generation = generation + 1 WHERE id = 1; END;
CREATE TRIGGER patron_changes_dapps_delete AFTER DELETE ON dapps BEGIN UPDATE patron_change_counter SET generation = generation + 1 WHERE id = 1; END;
CREATE TRIGGER patron_changes_webhooks_insert AFTER INSERT ON webhooks BEGIN UPDATE patron_change_counter SET generation = generation + 1 WHERE id = 1; END;
CREATE TRIGGER patron_changes_webhooks_update AFTER UPDATE ON webhooks BEGIN UPDATE patron_change_counter SET generation = generation + 1 WHERE id = 1; END;
CREATE TRIGGER patron_changes_webhooks_delete AFTER DELETE ON webhooks BEGIN UPDATE patron_change_counter SET generation = generation + 1 WHERE id = 1; END;
CREATE TRIGGER patron_changes_policies_insert AFTER INSERT ON policies BEGIN UPDATE patron_change_counter SET generation = generation + 1 WHERE id = 1; END;
CREATE TRIGGER patron_changes_policies_update AFTER UPDATE ON policies BEGIN UPDATE patron_change_counter SET generation = generation + 1 WHERE id = 1; END;
CREATE TRIGGER patron_changes_policies_delete AFTER DELETE ON policies BEGIN UPDATE patron_change_counter SET generation = generation + 1 WHERE id = 1; END;
CREATE TRIGGER patron_changes_auth_tokens_insert AFTER INSERT ON auth_tokens BEGIN UPDATE patron_change_counter SET generation = generation + 1 WHERE id = 1; END;
CREATE TRIGGER patron_changes_auth_tokens_delete AFTER DELETE ON auth_tokens BEGIN UPDATE patron_change_counter SET generation = generation + 1 WHERE id = 1; END;
CREATE TRIGGER patron_changes_auth_tokens_update AFTER UPDATE OF revoked_at ON auth_tokens BEGIN UPDATE patron_change_counter SET generation = generation + 1 WHERE id = 1; END;
