import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { naiveCells, parseRfc4180, startsWithTrigger } from '../../test/helpers/rfc4180.js';
import { type CsvColumn, csvField, csvHeader, csvRecord, neutraliseFormulas } from './csvRecord.js';

// The one CSV writer's rule (csvRecord.ts): every field quoted, and an apostrophe before every formula trigger
// that does not continue a word, in text fields only.

describe('neutraliseFormulas', () => {
  test("the red team's cases and their neighbours, each as the documented rule writes it", () => {
    const cases: [string, string][] = [
      ['frank;=WEBSERVICE("http://x");x', 'frank;\'=WEBSERVICE("http://x");x'],
      ['=1+1', "'=1+1"],
      ['+1', "'+1"],
      ['-2', "'-2"],
      ['@SUM(A1)', "'@SUM(A1)"],
      ['＝1+1', "'＝1+1"],
      ['＋1', "'＋1"],
      ['－1', "'－1"],
      ['＠SUM(1)', "'＠SUM(1)"],
      ['﹦1', "'﹦1"],
      ['−1', "'−1"],
      ['  =1+1', "  '=1+1"],
      ['\u00a0=1', "\u00a0'=1"],
      ['\u3000=1', "\u3000'=1"],
      ['\u200b=1', "\u200b'=1"],
      ['\ufeff=1', "\ufeff'=1"],
      ['\t=1', "'\t'=1"],
      ['\r\n=1', "'\r\n'=1"],
      ['\n@x', "'\n'@x"],
      ['\u0000x', "'\u0000x"],
      ['\tplain', "'\tplain"],
      ['a,=1', "a,'=1"],
      ['a|=1', "a|'=1"],
      ['a\t=1', "a\t'=1"],
      ['a =1', "a '=1"],
      ['a.=1', "a.'=1"],
      ['a"=1', 'a"\'=1'],
      ["'=1", "''=1"],
      ['x\n-1', "x\n'-1"],
      ['=+-@', "'=+-@"],
      ['\u0301=1', "\u0301'=1"],
      ['', ''],
    ];
    for (const [input, expected] of cases) assert.equal(neutraliseFormulas(input), expected, JSON.stringify(input));
  });

  test('inside words nothing changes', () => {
    for (const s of [
      'alice-smith',
      'a+b@example.com',
      '2026-11-01T00:00:00.000Z',
      '11111111-1111-4111-8111-111111111111',
      'auth0|5f7c8ec7c33c6c004bbafe82',
      'émile-x',
      'e\u0301-x',
      'ｕｓｅｒ＝１',
      '用户-1',
      '31337:0xabc',
    ]) {
      assert.equal(neutraliseFormulas(s), s, JSON.stringify(s));
    }
  });

  test('every code point: a trigger alone (NFKC = + - @ or −) gets the apostrophe, a control gets it, nothing else', () => {
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      const expected = startsWithTrigger(c) || /^\p{Cc}/u.test(c) ? `'${c}` : c;
      if (neutraliseFormulas(c) !== expected)
        assert.fail(`U+${cp.toString(16)}: ${JSON.stringify(neutraliseFormulas(c))}`);
    }
  });

  test('random values: no cell any quote-blind reader makes starts with a trigger; same as the rule as a regex', () => {
    const alphabet = [...'ab1Zé,;|. \t\r\n"\'=+-@', ...'\u00a0\u2003\u3000\u200b\ufeff\u0000\u0301＝＋－＠﹦−₊⁼'];
    // The rule as one regular expression (csvRecord.ts's comment, word for word): the oracle the loop is held to.
    const trigger =
      '[=+\\-@\\u2212\\u207A-\\u207C\\u208A-\\u208C\\u2A75\\u2A76\\uFB29\\uFE62\\uFE63\\uFE66\\uFE6B\\uFF0B\\uFF0D\\uFF1D\\uFF20]';
    const oracle = new RegExp(`(?<!(?:[\\p{L}\\p{N}]\\p{M}*|${trigger}))(?=${trigger})|^(?=\\p{Cc})`, 'gu');
    let seed = 31;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    const columns: CsvColumn<string>[] = [
      { name: 'before', kind: 'text', value: () => 'x' },
      { name: 'value', kind: 'text', value: (v) => v },
    ];
    for (let n = 0; n < 5000; n++) {
      const value = Array.from({ length: 1 + (next() % 24) }, () => alphabet[next() % alphabet.length]).join('');
      const safe = neutraliseFormulas(value);
      assert.equal(safe, value.replace(oracle, "'"), JSON.stringify(value));
      const record = csvRecord(columns, value);
      assert.equal(parseRfc4180(record)[0]?.[1]?.value, safe, 'the quoted field reads back exactly');
      for (const separator of [',', ';', '\t', '|', ' ', '.', '"']) {
        const bad = naiveCells(record, separator).find(startsWithTrigger);
        assert.equal(bad, undefined, `${JSON.stringify(value)} split on ${JSON.stringify(separator)}`);
      }
    }
  });
});

describe('csvField and csvRecord', () => {
  test('every field quoted, quotes doubled, null empty; quotes, commas, semicolons and line breaks read back', () => {
    const values = ['say "hi"', 'a,b;c', 'two\r\nlines', 'x\ny', '"', '', 'plain'];
    const columns = values.map(
      (_, i): CsvColumn<readonly string[]> => ({
        name: `c${i}`,
        kind: 'text',
        value: (row) => row[i] ?? null,
      }),
    );
    const text = csvHeader(columns) + csvRecord(columns, values) + csvRecord(columns, []);
    assert.equal(csvField('text', 'say "hi"'), '"say ""hi"""');
    assert.equal(csvField('text', null), '""');
    const records = parseRfc4180(text);
    assert.equal(records.length, 3);
    assert.ok(
      records.flat().every((f) => f.quoted),
      'every field quoted',
    );
    assert.deepEqual(
      records[0]?.map((f) => f.value),
      columns.map((c) => c.name),
    );
    assert.deepEqual(
      records[1]?.map((f) => f.value),
      values,
    );
    assert.deepEqual(
      records[2]?.map((f) => f.value),
      values.map(() => ''),
    );
    assert.ok(text.endsWith('\r\n'));
  });

  test('a number column keeps a plain decimal, negative too, and treats anything else as text', () => {
    assert.equal(csvField('number', -5n), '"-5"');
    assert.equal(csvField('number', '-0.25'), '"-0.25"');
    assert.equal(csvField('number', 31337), '"31337"');
    assert.equal(csvField('number', '1000000000000000000000'), '"1000000000000000000000"');
    assert.equal(csvField('number', '-1+2'), '"\'-1+2"');
    assert.equal(csvField('number', '=1'), '"\'=1"');
    assert.equal(csvField('number', '1;=2'), '"1;\'=2"');
    assert.equal(csvField('text', '-5'), '"\'-5"', 'the same value in a text column is text');
  });
});
