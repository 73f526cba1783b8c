import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MethodFamily } from '../../dappSettings/callerRestrictions.js';
import { guaranteeTermsOf } from './guaranteeTerms.js';

const cap = { limitWei: '1000', resets: 'daily' } as const;
const families = (...f: MethodFamily[]) => new Set<MethodFamily>(f);

test('mode 2 is open only to a dApp that turned guarantees on with a cap, through a key that may ask for sponsorship', () => {
  for (const guarantees of [undefined, { enabled: false }, { enabled: false, cap }]) {
    assert.deepEqual(guaranteeTermsOf({ guarantees, methods: undefined }), { allowed: false, rule: 'guaranteeOff' });
    // Off is what a key limited to tokenQuotes is told too: the dApp's choice comes first.
    assert.deepEqual(guaranteeTermsOf({ guarantees, methods: families('tokenQuotes') }).allowed, false);
  }
  const on = { enabled: true, cap };
  assert.deepEqual(guaranteeTermsOf({ guarantees: on, methods: undefined }), { allowed: true, cap });
  assert.deepEqual(guaranteeTermsOf({ guarantees: on, methods: families('tokenQuotes', 'sponsorship') }), {
    allowed: true,
    cap,
  });
  for (const methods of [families('tokenQuotes'), families('tokenQuotes', 'dryRun'), families('dryRun')]) {
    assert.deepEqual(guaranteeTermsOf({ guarantees: on, methods }), { allowed: false, rule: 'guaranteeKeyFamily' });
  }
});
