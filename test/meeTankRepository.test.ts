import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address } from 'viem';
import { ConflictError } from '../src/errors/PatronError.js';
import type { Store } from '../src/store/store.js';
import type { NewMeeTank } from '../src/store/tenants/meeTankRepository.js';
import { BACKEND, dropTestSchema, insertBareDapp, openTestStore } from './helpers/testContext.js';

/** The gas tanks table on the configured back end: lower-case addresses, one tank per address, retire, tenancy. */
let store: Store;
let schema: string | undefined;
let mine: string;
let theirs: string;

before(async () => {
  ({ store, schema } = await openTestStore());
  [mine, theirs] = [await insertBareDapp(store, 'tanks'), await insertBareDapp(store, 'tanks')];
});
after(async () => {
  await store.close();
  await dropTestSchema(schema);
});

let n = 0;
const tank = (dappId: string, address: string, over: Partial<NewMeeTank> = {}): NewMeeTank => {
  n += 1;
  return {
    id: `tank_${n}`,
    dappId,
    chainId: 31337,
    address: address as Address,
    token: '0xA0B86991C6218B36C1D19D4A2E9EB0CE3606EB48',
    tokenDecimals: 6,
    meeVersion: '2.2.1',
    signer: { kind: 'keystore', path: '/etc/patron/tank.json', password: { file: '/etc/patron/tank.pass' } },
    owner: '0x00000000000000000000000000000000000000AA',
    lowBalance: 5_000_000n,
    createdAt: 1_000 + n,
    ...over,
  };
};
const ADDR = (i: number) => `0x${i.toString(16).padStart(40, '0').toUpperCase().replace('0X', '')}`;

describe(`mee tank repository (${BACKEND})`, () => {
  test('create stores addresses lower-case and reads back what was given', async () => {
    const created = await store.meeTanks.create(tank(mine, `0x${'AB'.repeat(20)}`));
    assert.equal(created.address, `0x${'ab'.repeat(20)}`);
    assert.equal(created.token, '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48');
    assert.equal(created.owner, '0x00000000000000000000000000000000000000aa');
    assert.equal(created.status, 'active');
    assert.equal(created.retiredAt, undefined);
    assert.deepEqual(await store.meeTanks.get(created.id), created);
    assert.deepEqual(
      await store.meeTanks.findByAddress({ chainId: 31337, address: `0x${'Ab'.repeat(20)}` }),
      created,
      'found whatever the case of the address asked',
    );
    assert.equal(await store.meeTanks.findByAddress({ chainId: 1, address: created.address }), undefined);
    assert.equal(await store.meeTanks.get('tank_none'), undefined);
  });

  test('one tank per address and chain, whichever dApp asks and whatever the case; another chain is another tank', async () => {
    const a = ADDR(0x51);
    await store.meeTanks.create(tank(mine, a.toLowerCase()));
    for (const [dappId, address] of [
      [mine, a.toLowerCase()],
      [theirs, a],
    ] as const) {
      await assert.rejects(
        store.meeTanks.create(tank(dappId, address)),
        (err: unknown) => err instanceof ConflictError && /already registered/.test(err.message),
      );
    }
    const other = await store.meeTanks.create(tank(theirs, a, { chainId: 8453 }));
    assert.equal(other.chainId, 8453);
  });

  test('a signer reference with a stray field (a key) is refused, not written', async () => {
    const bad = {
      ...tank(mine, ADDR(0x52)),
      signer: { kind: 'keystore', path: '/k.json', password: { file: '/k.pass' }, privateKey: '0x01' },
    } as unknown as NewMeeTank;
    await assert.rejects(store.meeTanks.create(bad));
    assert.equal(await store.meeTanks.findByAddress({ chainId: 31337, address: ADDR(0x52) }), undefined);
  });

  test('lists per dApp hold only that dApp; list and allAddresses hold every tank, retired ones too', async () => {
    const t = await store.meeTanks.create(tank(theirs, ADDR(0x53)));
    await store.meeTanks.retire({ id: t.id, now: 9_000 });
    const minesIds = (await store.meeTanks.listForDapp(mine)).map((x) => x.dappId);
    assert.ok(minesIds.length > 0 && minesIds.every((d) => d === mine));
    assert.ok((await store.meeTanks.listForDapp(theirs)).some((x) => x.id === t.id));
    assert.ok(!(await store.meeTanks.listForDapp(mine)).some((x) => x.id === t.id));
    const all = await store.meeTanks.list();
    assert.ok(all.some((x) => x.dappId === mine) && all.some((x) => x.id === t.id));
    const addresses = await store.meeTanks.allAddresses();
    assert.ok(addresses.has(ADDR(0x53).toLowerCase()), 'a retired tank is still a tank Patron holds');
    assert.ok(addresses.has(`0x${'ab'.repeat(20)}`));
    assert.ok([...addresses].every((x) => x === x.toLowerCase()));
  });

  test('retire once: the first time sets the time, a second keeps it; an unknown id is undefined', async () => {
    const t = await store.meeTanks.create(tank(mine, ADDR(0x54)));
    const retired = await store.meeTanks.retire({ id: t.id, now: 5_000 });
    assert.equal(retired?.status, 'retired');
    assert.equal(retired?.retiredAt, 5_000);
    assert.equal((await store.meeTanks.retire({ id: t.id, now: 6_000 }))?.retiredAt, 5_000);
    assert.equal(await store.meeTanks.retire({ id: 'tank_none', now: 1 }), undefined);
  });

  test('setLowBalance sets and clears the threshold', async () => {
    const t = await store.meeTanks.create(tank(mine, ADDR(0x55), { lowBalance: undefined }));
    assert.equal(t.lowBalance, undefined);
    const big = 2n ** 80n;
    assert.equal((await store.meeTanks.setLowBalance({ id: t.id, lowBalance: big }))?.lowBalance, big);
    assert.equal((await store.meeTanks.setLowBalance({ id: t.id, lowBalance: undefined }))?.lowBalance, undefined);
    assert.equal(await store.meeTanks.setLowBalance({ id: 'tank_none', lowBalance: 1n }), undefined);
  });
});
