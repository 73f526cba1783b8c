/**
 * Every sheet Patron writes (the ledger's CSV, through the admin API, the dashboard's download of that route and
 * `patron ledger export`) is written by csvRecord, so the quoting and the formula rule below hold for all of them.
 *
 * Quoting (RFC 4180, https://www.rfc-editor.org/rfc/rfc4180 §2.5-2.7): every field is in double quotes, inner quotes
 * doubled, records end in CRLF. Quoting every field, not only those holding a comma, keeps a value whole in a
 * spreadsheet whose list separator is not the comma (`;` in most European locales, tab, `|`): an unquoted
 * `frank;=WEBSERVICE(…)` was two cells there, the second a formula.
 *
 * Formulas (CWE-1236; OWASP's "CSV Injection" page and its testing guide WSTG-INPV-21): spreadsheets (Excel,
 * LibreOffice Calc, Google Sheets, Numbers) may read a cell that starts with = + - @ as a formula (DDE, WEBSERVICE,
 * IMPORTXML and HYPERLINK reach out of the sheet); some importers trim leading spaces, tabs, line breaks or U+00A0
 * first (so " =1" and "\t=1" run too), and the testing guide adds the full-width ＝ ＋ － ＠, depending on locale
 * and application. Quoting alone does not help: the quotes are CSV's syntax, not a text marker, and a reader set to
 * another separator or to no text qualifier (an import dialog's choice) starts a cell after any separator inside a
 * value. So in a text field an apostrophe goes right before every trigger (the four, and every character whose NFKC
 * form is one of them or the minus sign U+2212) that does not continue a word, that is, that follows
 * neither a letter or digit (with its combining marks) nor another trigger. That covers the field's start behind
 * any whitespace or invisible characters, and the start of every piece a reader could cut the field into, whatever
 * it splits on (`,` `;` tab `|` space `.` a quote, a line break). The apostrophe is what OWASP advises and what the
 * spreadsheets take for "text"; placed right before the trigger it still leads the piece after a reader trims or
 * splits. Inside words nothing changes (`alice-smith`, `a+b@example.com`). A field that starts with a control
 * character (tab, CR, LF, NUL: OWASP's and ASVS 1.2.10's list) also gets an apostrophe in front.
 *
 * Numbers are not text: a number column's value is written as it is when it is a plain decimal (an optional minus,
 * digits, an optional fraction), which every spreadsheet reads as a number and none as a formula, so a negative
 * amount would stay numeric; anything else in a number column is treated as text.
 *
 * Not coverable in a CSV: Excel may save an edited file back without the apostrophes, so a copy re-saved as CSV
 * from Excel may no longer be protected.
 */

/** The formula triggers beyond ASCII's = + - @: the characters whose NFKC form starts with one of them or with −. */
const WIDE_TRIGGERS = [
  0x2212, 0x207a, 0x207b, 0x207c, 0x208a, 0x208b, 0x208c, 0x2a75, 0x2a76, 0xfb29, 0xfe62, 0xfe63, 0xfe66, 0xfe6b,
  0xff0b, 0xff0d, 0xff1d, 0xff20,
];
const WIDE = new Set(WIDE_TRIGGERS);
const isTrigger = (c: number) => (c < 0x80 ? c === 0x3d || c === 0x2b || c === 0x2d || c === 0x40 : WIDE.has(c));
/** Any trigger, for the engine's fast scan (all are in the BMP: no `u` flag needed). */
const ANY_TRIGGER = new RegExp(`[=+\\-@${WIDE_TRIGGERS.map((c) => `\\u${c.toString(16)}`).join('')}]`);
/** Unicode's Cc: C0, DEL and C1. */
const isControl = (c: number) => c < 0x20 || (c >= 0x7f && c < 0xa0);
const isAsciiWordChar = (c: number) => (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a);
/** A letter or digit, then its combining marks, ending the text (the slow path, for non-ASCII text only). */
const ENDS_IN_WORD = /[\p{L}\p{N}]\p{M}*$/u;
/**
 * How far back the slow path looks. A longer run of marks after a letter reads as no letter: the trigger gets its
 * apostrophe, the safe side (and an attacker's 256-character id cannot make each trigger rescan the whole value).
 */
const WORD_WINDOW = 16;

/** Whether the trigger at i continues a word or a run of triggers (nothing a reader could start a cell at). */
function continuesWord(text: string, i: number): boolean {
  const prev = text.charCodeAt(i - 1);
  if (isTrigger(prev) || isAsciiWordChar(prev)) return true;
  return prev >= 0x80 && ENDS_IN_WORD.test(text.slice(Math.max(0, i - WORD_WINDOW), i));
}

/**
 * A text value as a spreadsheet can show it but never run it (the rule above). A loop from the engine's scan to
 * the first trigger (most fields, hashes and addresses, hold none) rather than the rule as one regular expression
 * with a look-behind (csvRecord.test.ts holds the two equal): measured on a 50,000-row export, CPU +15% over the
 * export before this rule with the loop, +32% with the expression.
 */
export function neutraliseFormulas(text: string): string {
  let out = text.length > 0 && isControl(text.charCodeAt(0)) ? "'" : '';
  let from = 0;
  for (let i = text.search(ANY_TRIGGER); i >= 0 && i < text.length; i++) {
    if (!isTrigger(text.charCodeAt(i)) || (i > 0 && continuesWord(text, i))) continue;
    out += `${text.slice(from, i)}'`;
    from = i;
  }
  return out === '' ? text : out + text.slice(from);
}

const PLAIN_DECIMAL = /^-?\d+(?:\.\d+)?$/;

export type CsvKind = 'text' | 'number';
export type CsvValue = string | number | bigint | null;

/** One field, quoted; null is the empty field. */
export function csvField(kind: CsvKind, value: CsvValue): string {
  if (value === null) return '""';
  const s = String(value);
  const safe = kind === 'number' && PLAIN_DECIMAL.test(s) ? s : neutraliseFormulas(s);
  return `"${safe.includes('"') ? safe.replaceAll('"', '""') : safe}"`;
}

/** A sheet's column: its header, whether it holds numbers, and its value in a row. */
export interface CsvColumn<Row> {
  readonly name: string;
  readonly kind: CsvKind;
  readonly value: (row: Row) => CsvValue;
}

/** One record of the sheet: the row's value in each column, CRLF-terminated. */
export function csvRecord<Row>(columns: readonly CsvColumn<Row>[], row: Row): string {
  return `${columns.map((c) => csvField(c.kind, c.value(row))).join(',')}\r\n`;
}

/** The header record: the columns' names, quoted like every other field. */
export function csvHeader<Row>(columns: readonly CsvColumn<Row>[]): string {
  return `${columns.map((c) => csvField('text', c.name)).join(',')}\r\n`;
}
