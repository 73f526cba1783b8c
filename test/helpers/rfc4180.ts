/**
 * A strict RFC 4180 reader for the tests of the CSV Patron writes (https://www.rfc-editor.org/rfc/rfc4180 §2): fields
 * separated by commas, records by CRLF, a quoted field's quotes doubled, nothing after a closing quote but a comma
 * or CRLF. It throws where a lenient reader would guess: a quote inside an unquoted field, a bare CR or LF outside
 * quotes, an unterminated quote, records of different lengths. It also says which fields were quoted.
 */
export interface Rfc4180Field {
  readonly value: string;
  readonly quoted: boolean;
}

export function parseRfc4180(text: string): Rfc4180Field[][] {
  const records: Rfc4180Field[][] = [];
  let record: Rfc4180Field[] = [];
  let i = 0;
  while (i < text.length) {
    const field = text[i] === '"' ? quotedField(text, i) : unquotedField(text, i);
    record.push({ value: field.value, quoted: field.quoted });
    i = field.end;
    if (i === text.length) break;
    if (text[i] === ',') {
      i++;
      if (i === text.length) record.push({ value: '', quoted: false });
    } else if (text.startsWith('\r\n', i)) {
      records.push(record);
      record = [];
      i += 2;
    } else {
      throw new Error(`RFC 4180: ${JSON.stringify(text[i])} after a field at offset ${i}`);
    }
  }
  if (record.length > 0) records.push(record);
  const width = records[0]?.length ?? 0;
  for (const [n, r] of records.entries()) {
    if (r.length !== width) throw new Error(`RFC 4180: record ${n} has ${r.length} fields, the first ${width}`);
  }
  return records;
}

function quotedField(text: string, start: number): { value: string; quoted: true; end: number } {
  let value = '';
  let i = start + 1;
  for (;;) {
    const close = text.indexOf('"', i);
    if (close < 0) throw new Error(`RFC 4180: the quote at offset ${start} is never closed`);
    value += text.slice(i, close);
    if (text[close + 1] !== '"') return { value, quoted: true, end: close + 1 };
    value += '"';
    i = close + 2;
  }
}

function unquotedField(text: string, start: number): { value: string; quoted: false; end: number } {
  let i = start;
  while (i < text.length && text[i] !== ',' && !text.startsWith('\r\n', i)) {
    const c = text[i];
    if (c === '"' || c === '\r' || c === '\n') {
      throw new Error(`RFC 4180: ${JSON.stringify(c)} in an unquoted field at offset ${i}`);
    }
    i++;
  }
  return { value: text.slice(start, i), quoted: false, end: i };
}

/**
 * The cells a spreadsheet that ignores CSV quoting would make of raw CSV text when set to split on `separator`
 * (an import dialog's "text qualifier: none"): every line, then every piece of it, with the leading characters an
 * importer may trim (whitespace, controls, invisible format characters, stray quotes) removed. What the formula
 * rule is checked against: no such cell may start with a formula trigger.
 */
export function naiveCells(text: string, separator: string): string[] {
  return text
    .split(/\r\n|\r|\n/)
    .flatMap((line) => line.split(separator))
    .map((piece) => piece.replace(/^[\s\p{Cc}\p{Cf}"]+/u, ''));
}

/** Whether a cell starts with what a spreadsheet may run: = + - @ or any character whose NFKC form is one, or −. */
export const startsWithTrigger = (cell: string): boolean => /^[=+\-@\u2212]/.test(cell.slice(0, 1).normalize('NFKC'));
