// The typed client's errors, per operation: each call's `GatewayCallError.error` is the union of exactly that
// operation's error members, discriminated by `_tag`, their fields typed. Proven twice: `expectTypeOf`
// below (checked by `npm run typecheck`, which compiles this file), and programs compiled here with the
// TypeScript compiler that must fail: a misspelled `_tag`, and the exhaustive switch of the client's
// seal example once an error member is added to the operation. The examples of client/README.md are the
// files of client/examples/, compiled here (and run against a gateway in test/client-examples.test.ts).
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { PROJECT_DIR } from '../db/index.js';
import {
  CreateSessionDocument, GatewayCallError, GenerateDocument, SealSessionDocument, unhandled,
  type AnyCallError, type CallError, type CallResult, type GatewayClient, type GatewayErrorName, type SealUnsupportedReason,
} from '../client/index.js';

type SealError = CallError<typeof SealSessionDocument>;

describe('types (checked by npm run typecheck)', () => {
  it('gives each operation the union of exactly its error members, fields typed', () => {
    expectTypeOf<SealError['_tag']>().toEqualTypeOf<'InvalidRequestError' | 'SealTimeoutError' | 'SealUnsupportedError' | 'SessionNotFoundError'>();
    expectTypeOf<Extract<SealError, { _tag: 'SealUnsupportedError' }>['reason']>().toEqualTypeOf<SealUnsupportedReason>();
    expectTypeOf<Extract<SealError, { _tag: 'SealTimeoutError' }>['timeoutMs']>().toEqualTypeOf<number>();
    expectTypeOf<Extract<SealError, { _tag: 'InvalidRequestError' }>['field']>().toEqualTypeOf<string>();
    // Another operation, another union.
    expectTypeOf<CallError<typeof GenerateDocument>['_tag']>().toEqualTypeOf<
      'CommandTimeoutError' | 'HostUnavailableError' | 'InvalidRequestError' | 'ModelNotFoundError' | 'SessionNotFoundError' | 'UnsupportedError'>();
    // `call` answers the success member only (a function never run: its type is what is checked).
    const seal = (gw: GatewayClient) => gw.call(SealSessionDocument, { input: { sessionID: 'ses_x' } });
    expectTypeOf<Awaited<ReturnType<typeof seal>>>().toEqualTypeOf<CallResult<typeof SealSessionDocument>>();
    expectTypeOf<CallResult<typeof SealSessionDocument>['__typename']>().toEqualTypeOf<'SessionSealed'>();
  });

  it('narrows a caught error to its operation with GatewayCallError.is, to the schema\'s error names with instanceof', () => {
    const narrow = (caught: unknown) => {
        if (GatewayCallError.is(caught, SealSessionDocument)) expectTypeOf(caught.error).toEqualTypeOf<SealError>();
      if (caught instanceof GatewayCallError) {
        expectTypeOf(caught.error).toEqualTypeOf<AnyCallError>();
        expectTypeOf(caught.error._tag).toEqualTypeOf<GatewayErrorName>();
      }
    };
    narrow(null);
    expectTypeOf(unhandled).parameter(0).toEqualTypeOf<never>();
  });
});

describe('at run time', () => {
  it('GatewayCallError.is holds for the document the call ran, and only that one', () => {
    const e = new GatewayCallError({ _tag: 'SessionNotFoundError' as const, message: 'no', code: 404, sessionID: 'ses_x' }, SealSessionDocument);
    expect(GatewayCallError.is(e, SealSessionDocument)).toBe(true);
    expect(GatewayCallError.is(e, CreateSessionDocument)).toBe(false);
    expect(GatewayCallError.is(new Error('x'), SealSessionDocument)).toBe(false);
    expect(e.message).toBe('SessionNotFoundError: no');
  });

  it('unhandled throws naming the member a newer gateway answered', () => {
    expect(() => unhandled({ _tag: 'BrandNewError' } as never)).toThrow('unhandled result member: BrandNewError');
  });
});

/** Compiles `entries` (with these files' contents replaced or added) as the project compiles; answers the diagnostics. */
function compile(entries: string[], replaced: Record<string, string> = {}): ts.Diagnostic[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true, noEmit: true, skipLibCheck: true, types: ['node'], isolatedModules: true,
    // The package by its name, from its sources (what client/dist is built from).
    baseUrl: PROJECT_DIR, paths: { '@agent-history/client': ['client/index.ts'] },
  };
  const files = new Map(Object.entries(replaced).map(([f, text]) => [path.resolve(PROJECT_DIR, f), text]));
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, lang, ...rest) => {
    const text = files.get(path.resolve(name));
    return text !== undefined ? ts.createSourceFile(name, text, lang) : getSourceFile.call(host, name, lang, ...rest);
  };
  host.fileExists = (name) => files.has(path.resolve(name)) || fileExists.call(host, name);
  host.readFile = (name) => files.get(path.resolve(name)) ?? readFile.call(host, name);
  const program = ts.createProgram(entries.map((f) => path.resolve(PROJECT_DIR, f)), options, host);
  return [...ts.getPreEmitDiagnostics(program)];
}

/** Each diagnostic as `file:line TScode`, with the source line, for assertions and failure messages. */
function described(diagnostics: ts.Diagnostic[]): { where: string; code: number; line: string; text: string }[] {
  return diagnostics.map((d) => {
    const pos = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : null;
    const line = pos && d.file ? d.file.text.split('\n')[pos.line].trim() : '';
    return { where: `${d.file ? path.relative(PROJECT_DIR, d.file.fileName) : '?'}:${pos ? pos.line + 1 : 0}`, code: d.code, line, text: ts.flattenDiagnosticMessageText(d.messageText, '\n') };
  });
}

const EXAMPLES = readdirSync(path.join(PROJECT_DIR, 'client/examples')).filter((f) => f.endsWith('.ts')).map((f) => `client/examples/${f}`);
const SEAL_EXAMPLE = 'client/examples/seal.ts';
const source = (f: string) => readFileSync(path.join(PROJECT_DIR, f), 'utf8');

describe('compiled with TypeScript', () => {
  it('the examples of client/README.md compile, and the README shows each as it is', () => {
    expect(EXAMPLES).toEqual(expect.arrayContaining(['client/examples/analytics.ts', 'client/examples/review-reads.ts', SEAL_EXAMPLE]));
    expect(described(compile(EXAMPLES))).toEqual([]);
    const readme = source('client/README.md');
    for (const f of EXAMPLES) expect(readme, `client/README.md shows ${f}`).toContain(source(f).trim());
  });

  it('a misspelled _tag does not compile, neither in a switch nor in a comparison', () => {
    const seal = source(SEAL_EXAMPLE);
    const misspelled = seal.replace("case 'SealUnsupportedError':", "case 'SealUnsuportedError':");
    expect(misspelled).not.toBe(seal);
    const inSwitch = described(compile([SEAL_EXAMPLE], { [SEAL_EXAMPLE]: misspelled }));
    // TS2678: Type '"SealUnsuportedError"' is not comparable to type '"InvalidRequestError" | …'.
    expect(inSwitch.map((d) => [d.code, d.line])).toContainEqual([2678, "case 'SealUnsuportedError':"]);

    const comparisons = 'client/examples/__typo.ts';
    const diagnostics = described(compile([comparisons], {
      [comparisons]: [
        "import { GatewayCallError, SealSessionDocument } from '@agent-history/client';",
        'export function tag(e: unknown): string {',
        "  if (GatewayCallError.is(e, SealSessionDocument) && e.error._tag === 'SealUnsuportedError') return 'unsupported';",
        "  if (e instanceof GatewayCallError && e.error._tag === 'SessionBusyEror') return 'busy';",
        "  if (GatewayCallError.is(e, SealSessionDocument) && e.error._tag === 'SessionNotFoundError') return e.error.reason;",
        "  return '';",
        '}',
        '',
      ].join('\n'),
    }));
    // TS2367: "This comparison appears to be unintentional": for the operation's union and for any error of the schema.
    expect(diagnostics.filter((d) => d.code === 2367).map((d) => d.where)).toEqual([`${comparisons}:3`, `${comparisons}:4`]);
    // TS2339: a field the member does not have (SessionNotFoundError has no `reason`).
    expect(diagnostics.filter((d) => d.code === 2339).map((d) => d.where)).toEqual([`${comparisons}:5`]);
  });

  it('the exhaustive switch of the seal example stops compiling when the operation gains an error member', () => {
    const generated = source('client/generated.ts');
    const member = "    | { __typename: 'SessionBusyError', message: string, code: number, sessionID: string | null, executionID: string }\n";
    const grown = generated.replace(/(export type SealSessionMutation = \{ sealSession:\n)/, `$1${member}`);
    expect(grown).not.toBe(generated);
    const diagnostics = described(compile([SEAL_EXAMPLE], { 'client/generated.ts': grown }));
    // TS2345: Argument of type '{ _tag: "SessionBusyError"; … }' is not assignable to parameter of type 'never'.
    expect(diagnostics.map((d) => [d.where, d.code, d.line])).toEqual([[expect.stringMatching(/^client\/examples\/seal\.ts:\d+$/), 2345, 'return unhandled(error);']]);
    expect(diagnostics[0].text).toContain('SessionBusyError');
  });
});
