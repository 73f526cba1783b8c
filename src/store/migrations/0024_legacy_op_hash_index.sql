-- One index entry fewer per signed op (issue 31's benchmark: scenario a cost ~20 µs more CPU than before migration
-- 0022, most of it SQLite's transaction and insert): since 0022 a reservation is found by its op key
-- (spend_reservations_op_key), and (chain, userOpHash) is read only for rows made before it, whose op_key is NULL
-- (userOpSettlement.ts, settleLegacy). New rows leave that index out; its query names `op_key IS NULL` so that both
-- databases use the partial index.
DROP INDEX spend_reservations_op;
CREATE INDEX spend_reservations_op ON spend_reservations (chain_id, user_op_hash) WHERE op_key IS NULL;
