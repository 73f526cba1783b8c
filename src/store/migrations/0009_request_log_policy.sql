-- The request log learns the policy decision and, for a signed op, its userOpHash, so that settlement can write
-- what the op really cost (issue 11). `policy` is JSON ({ decision: passed | denied, rule?, policyId?,
-- policyIds?, reservationId?, reserved? }); `actual_cost_wei` is the UserOperationEvent's actualGasCost.
ALTER TABLE request_log ADD COLUMN policy TEXT;
ALTER TABLE request_log ADD COLUMN user_op_hash TEXT;
ALTER TABLE request_log ADD COLUMN actual_cost_wei TEXT;
CREATE INDEX request_log_op ON request_log (chain_id, user_op_hash);
