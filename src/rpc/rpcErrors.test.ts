import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OperationFieldError } from '../errors/PatronError.js';
import { RPC, toRpcError } from './rpcErrors.js';

test('an op field the domain refuses is named where the JSON-RPC request put the op (params[0])', () => {
  const field = toRpcError(new OperationFieldError('maxFeePerGas', 'must be set to quote a fee in tokens'));
  assert.deepEqual(field, {
    error: {
      code: RPC.INVALID_PARAMS,
      message: 'Invalid params: params[0].maxFeePerGas: must be set to quote a fee in tokens',
    },
    http: 400,
    internal: false,
  });
  const whole = toRpcError(new OperationFieldError(undefined, 'the 0x7702 initCode needs eip7702Auth'));
  assert.equal(whole.error.message, 'Invalid params: params[0]: the 0x7702 initCode needs eip7702Auth');
  // Outside JSON-RPC the message names the op's field without a params path.
  assert.equal(
    new OperationFieldError('callGasLimit', 'required when calculateGasLimits is false').shortMessage,
    "The user operation's callGasLimit: required when calculateGasLimits is false",
  );
});
