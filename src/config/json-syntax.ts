/**
 * Where a JSON text first breaks, as line and column. JSON.parse on Node 20 often says only
 * "Unexpected token" without a position, which is no help in a 40-line config file, so when it fails the
 * text is scanned again by this small checker (RFC 8259 grammar; only ever run on a failure path).
 */

export interface JsonSyntaxProblem {
  line: number;
  column: number;
  expected: string;
  found: string;
}

class SyntaxStop extends Error {
  constructor(
    readonly offset: number,
    readonly expected: string,
  ) {
    super(expected);
  }
}

const NUMBER = /-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;
const ESCAPE = /\\(["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

class Scanner {
  pos = 0;
  constructor(private readonly text: string) {}

  fail(expected: string): never {
    throw new SyntaxStop(this.pos, expected);
  }

  space(): void {
    while (this.pos < this.text.length && ' \t\n\r'.includes(this.text[this.pos]!)) this.pos++;
  }

  expect(char: string, expected: string): void {
    this.space();
    if (this.text[this.pos] !== char) this.fail(expected);
    this.pos++;
  }

  value(): void {
    this.space();
    const c = this.text[this.pos];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return this.string();
    for (const word of ['true', 'false', 'null']) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return;
      }
    }
    NUMBER.lastIndex = this.pos;
    if (NUMBER.test(this.text)) {
      this.pos = NUMBER.lastIndex;
      return;
    }
    this.fail('a JSON value');
  }

  string(): void {
    this.pos++;
    for (;;) {
      const c = this.text[this.pos];
      if (c === undefined || c === '\n') this.fail("a closing '\"'");
      if (c === '"') {
        this.pos++;
        return;
      }
      if (c === '\\') {
        ESCAPE.lastIndex = this.pos;
        if (!ESCAPE.test(this.text)) this.fail('a valid escape sequence');
        this.pos = ESCAPE.lastIndex;
      } else if (c < ' ') {
        this.fail('no control character inside a string');
      } else {
        this.pos++;
      }
    }
  }

  /** An object or an array: items separated by commas up to `close`. */
  sequence(close: string, item: () => void, after: string): void {
    this.pos++;
    this.space();
    if (this.text[this.pos] === close) {
      this.pos++;
      return;
    }
    for (;;) {
      item();
      this.space();
      if (this.text[this.pos] === close) {
        this.pos++;
        return;
      }
      this.expect(',', `',' or '${close}' after the ${after}`);
    }
  }

  object(): void {
    this.sequence(
      '}',
      () => {
        this.space();
        if (this.text[this.pos] !== '"') this.fail('a property name in double quotes');
        this.string();
        this.expect(':', "':' after the property name");
        this.value();
      },
      'property value',
    );
  }

  array(): void {
    this.sequence(']', () => this.value(), 'array element');
  }
}

function describeAt(text: string, offset: number): string {
  if (offset >= text.length) return 'the end of the file';
  const rest = text.slice(offset).split('\n')[0]!;
  return `'${rest.length > 16 ? `${rest.slice(0, 16)}…` : rest}'`;
}

/** The first syntax error in `text` (1-based line and column), or undefined when it is valid JSON. */
export function findJsonSyntaxError(text: string): JsonSyntaxProblem | undefined {
  const scanner = new Scanner(text);
  try {
    scanner.value();
    scanner.space();
    if (scanner.pos < text.length) scanner.fail('the end of the file after the top-level value');
    return undefined;
  } catch (err) {
    if (!(err instanceof SyntaxStop)) throw err;
    const before = text.slice(0, err.offset).split('\n');
    return {
      line: before.length,
      column: before[before.length - 1]!.length + 1,
      expected: err.expected,
      found: describeAt(text, err.offset),
    };
  }
}
