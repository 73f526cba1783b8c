-- The request log learns the policy decision and, for a signed op, its userOpHash (issue 11). `policy` is JSON
-- ({ decision: passed | denied, rule?, policyId?, policyIds?, reservationId?, reserved? }).
ALTER TABLE request_log ADD COLUMN policy TEXT;
ALTER TABLE request_log ADD COLUMN user_op_hash TEXT;
-- What an included op of Patron's paymaster really cost (the UserOperationEvent's actualGasCost), written by
-- settlement and joined to the log when it is read. Not a column of request_log: an index on the userOpHash there
-- made every logged request's insert several times dearer (a random key in a second b-tree), on the request
-- path's event loop; here the write is settlement's, one row per included op.
CREATE TABLE included_ops (
  chain_id BIGINT NOT NULL,
  user_op_hash TEXT NOT NULL,
  actual_cost_wei TEXT NOT NULL,
  -- Unix ms when settlement saw it; rows are pruned with the request log's retention.
  at BIGINT NOT NULL,
  PRIMARY KEY (chain_id, user_op_hash)
);
CREATE INDEX included_ops_at ON included_ops (at);
