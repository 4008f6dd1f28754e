/**
 * A subset of SendGrid's Email Activity query language (`GET /v3/messages?query=...`):
 *
 *   cond   := field op value
 *   field  := msg_id | from_email | to_email | subject | status | unique_args['name'] | unique_args["name"]
 *   op     := = | != | LIKE | NOT LIKE          (LIKE: % matches any run, _ one character)
 *   value  := "double quoted" | 'single quoted' | number
 *   expr   := term (OR term)*;  term := factor (AND factor)*;  factor := NOT factor | ( expr ) | cond
 *
 * Keywords are case-insensitive. Custom args (`custom_args` in mail send) are queried as
 * `unique_args` — SendGrid's older name. Anything else is a 400 with an "invalid query" error.
 */

export interface ActivityRecord {
  from_email: string;
  msg_id: string;
  subject: string;
  to_email: string;
  status: 'delivered' | 'not_delivered' | 'processed';
  opens_count: number;
  clicks_count: number;
  last_event_time: string;
}

/** What a query can look at: the record plus its (merged) custom args. */
export interface QueryTarget {
  record: ActivityRecord;
  uniqueArgs: Readonly<Record<string, string>>;
}

export type Predicate = (t: QueryTarget) => boolean;

export class QuerySyntaxError extends Error {}

type Token =
  | { kind: 'word'; value: string }
  | { kind: 'string'; value: string }
  | { kind: 'op'; value: '=' | '!=' }
  | { kind: 'lparen' | 'rparen' }
  | { kind: 'field'; value: string };

function tokenize(q: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < q.length) {
    const ch = q[i] as string;
    if (/\s/.test(ch)) {
      i++;
    } else if (ch === '(') {
      out.push({ kind: 'lparen' });
      i++;
    } else if (ch === ')') {
      out.push({ kind: 'rparen' });
      i++;
    } else if (ch === '=') {
      out.push({ kind: 'op', value: '=' });
      i++;
    } else if (ch === '!' && q[i + 1] === '=') {
      out.push({ kind: 'op', value: '!=' });
      i += 2;
    } else if (ch === '"' || ch === "'") {
      const [value, next] = readQuoted(q, i);
      out.push({ kind: 'string', value });
      i = next;
    } else {
      const m = /^[A-Za-z0-9_.+@-]+/.exec(q.slice(i));
      if (!m) throw new QuerySyntaxError(`unexpected character ${JSON.stringify(ch)} at ${i}`);
      const word = m[0];
      i += word.length;
      if (word.toLowerCase() === 'unique_args' && q[i] === '[') {
        const quote = q[i + 1];
        if (quote !== '"' && quote !== "'") throw new QuerySyntaxError(`expected a quoted name after unique_args[ at ${i}`);
        const [name, next] = readQuoted(q, i + 1);
        if (q[next] !== ']') throw new QuerySyntaxError(`expected ] at ${next}`);
        out.push({ kind: 'field', value: `unique_args:${name}` });
        i = next + 1;
      } else {
        out.push({ kind: 'word', value: word });
      }
    }
  }
  return out;
}

function readQuoted(q: string, start: number): [string, number] {
  const quote = q[start];
  let value = '';
  let i = start + 1;
  while (i < q.length) {
    const c = q[i] as string;
    if (c === '\\' && i + 1 < q.length) {
      value += q[i + 1];
      i += 2;
    } else if (c === quote) {
      return [value, i + 1];
    } else {
      value += c;
      i++;
    }
  }
  throw new QuerySyntaxError('unterminated string');
}

const FIELDS = new Set(['msg_id', 'from_email', 'to_email', 'subject', 'status']);

function likeToRegExp(pattern: string): RegExp {
  let re = '';
  for (const c of pattern) {
    if (c === '%') re += '.*';
    else if (c === '_') re += '.';
    else re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'is');
}

/** Parses a query into a predicate; throws {@link QuerySyntaxError}. */
export function parseActivityQuery(query: string): Predicate {
  const tokens = tokenize(query);
  let pos = 0;
  const peek = (): Token | undefined => tokens[pos];
  const isWord = (t: Token | undefined, w: string): boolean => t?.kind === 'word' && t.value.toLowerCase() === w;

  function expr(): Predicate {
    let left = term();
    while (isWord(peek(), 'or')) {
      pos++;
      const l = left;
      const r = term();
      left = (t) => l(t) || r(t);
    }
    return left;
  }
  function term(): Predicate {
    let left = factor();
    while (isWord(peek(), 'and')) {
      pos++;
      const l = left;
      const r = factor();
      left = (t) => l(t) && r(t);
    }
    return left;
  }
  function factor(): Predicate {
    const t = peek();
    if (isWord(t, 'not')) {
      pos++;
      const inner = factor();
      return (x) => !inner(x);
    }
    if (t?.kind === 'lparen') {
      pos++;
      const inner = expr();
      if (peek()?.kind !== 'rparen') throw new QuerySyntaxError('expected )');
      pos++;
      return inner;
    }
    return cond();
  }
  function cond(): Predicate {
    const f = tokens[pos++];
    let get: (t: QueryTarget) => string | undefined;
    if (f?.kind === 'field') {
      const name = f.value.slice('unique_args:'.length);
      get = (t) => t.uniqueArgs[name];
    } else if (f?.kind === 'word' && FIELDS.has(f.value.toLowerCase())) {
      const key = f.value.toLowerCase() as keyof ActivityRecord;
      get = (t) => String(t.record[key]);
    } else {
      throw new QuerySyntaxError(`unknown field ${f && 'value' in f ? f.value : '(end of query)'}`);
    }
    const opTok = tokens[pos++];
    let op: '=' | '!=' | 'like' | 'not like';
    if (opTok?.kind === 'op') op = opTok.value;
    else if (isWord(opTok, 'like')) op = 'like';
    else if (isWord(opTok, 'not') && isWord(peek(), 'like')) {
      pos++;
      op = 'not like';
    } else throw new QuerySyntaxError('expected an operator (=, !=, LIKE, NOT LIKE)');
    const v = tokens[pos++];
    if (!(v?.kind === 'string' || (v?.kind === 'word' && /^-?\d+(\.\d+)?$/.test(v.value)))) {
      throw new QuerySyntaxError('expected a quoted value');
    }
    const value = v.value;
    switch (op) {
      case '=':
        return (t) => get(t) === value;
      case '!=':
        return (t) => get(t) !== value;
      case 'like': {
        const re = likeToRegExp(value);
        return (t) => {
          const s = get(t);
          return s !== undefined && re.test(s);
        };
      }
      case 'not like': {
        const re = likeToRegExp(value);
        return (t) => {
          const s = get(t);
          return s === undefined || !re.test(s);
        };
      }
    }
  }

  if (tokens.length === 0) throw new QuerySyntaxError('empty query');
  const p = expr();
  if (pos !== tokens.length) throw new QuerySyntaxError('unexpected trailing input');
  return p;
}
