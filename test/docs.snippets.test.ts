import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { cliCommandNames } from '../src/cli/commandTable.js';
import { runCli } from '../src/cli/main.js';
import { loadConfig } from '../src/config/config.js';
import { type CodeBlock, codeBlocks, docFiles, ROOT } from './helpers/docsSnippets.js';
import { type ServiceProcess, spawnService } from './helpers/serviceProcess.js';
import { BACKEND } from './helpers/testContext.js';

/**
 * Every code block of README.md and docs/ is run or checked, by the convention docs/README.md states ("Code
 * blocks"): `sh` runs in bash against one Patron this file starts (the dev chain, SQLite in a temp data
 * directory), `sh synopsis` names only real CLI commands and options, `json` parses (`jsonrpc`: is answered by
 * the service; `config=VAR`: the configuration accepts it), `ts` type-checks against the installed SDKs (`ts run`:
 * and runs with tsx against that Patron and its dev bundler), and `text` holds no command. Anything else, or a block that cannot run here, says `no-run reason="…"`: a block
 * with neither fails, so no snippet goes unnoticed.
 */
const blocks = docFiles().flatMap(codeBlocks);
const KNOWN_COMMANDS = new Set(cliCommandNames);

// The docs describe the embedded defaults, which the SQLite pass of the suite runs; the PostgreSQL pass would
// run the same blocks against the same SQLite service again.
const skipOnPg = BACKEND === 'postgres' ? 'the docs run on the embedded defaults: the SQLite pass runs them' : false;

const where = (b: CodeBlock) => `${b.file}:${b.line}`;
const noRunReason = (b: CodeBlock) => (b.attrs['no-run'] === true ? b.attrs.reason : undefined);

describe('the docs’ code blocks follow the convention', () => {
  test('each block has a language and a run rule, or says why it does not run', () => {
    const runnable = new Set(['sh', 'json', 'ts', 'text']);
    for (const b of blocks) {
      assert.notEqual(b.lang, '', `${where(b)}: a code block names its language`);
      if (b.attrs['no-run'] !== undefined) {
        const reason = noRunReason(b);
        assert.ok(typeof reason === 'string' && reason.trim().length >= 10, `${where(b)}: no-run needs reason="…"`);
        continue;
      }
      assert.ok(runnable.has(b.lang), `${where(b)}: \`${b.lang}\` has no run rule: mark it no-run reason="…"`);
    }
  });

  test('`text` blocks hold no command (a command goes in an `sh` block, which runs)', () => {
    for (const b of blocks.filter((x) => x.lang === 'text')) {
      for (const line of b.code.split('\n')) {
        assert.doesNotMatch(line, /^\s*(\$ |patron |npm |curl |node |npx )/, `${where(b)}: "${line}"`);
      }
    }
  });
});

describe('`sh synopsis` blocks name real commands and options', () => {
  for (const b of blocks.filter((x) => x.lang === 'sh' && x.attrs.synopsis === true)) {
    test(where(b), async () => {
      for (const raw of b.code.split('\n')) {
        const line = raw.replace(/\s#.*$/, '').trim();
        if (line === '' || line.startsWith('#')) continue;
        const words = line.replace(/^([A-Z_]+=\S+\s+)+/, '').split(/\s+/);
        assert.equal(words[0], 'patron', `${where(b)}: a synopsis line is a patron command: "${line}"`);
        // Three words for `dapp tokens show|set|clear`, two for most, one for `demo`.
        const three = `${words[1]} ${words[2]} ${words[3]}`;
        const two = `${words[1]} ${words[2]}`;
        const name = KNOWN_COMMANDS.has(three) ? three : KNOWN_COMMANDS.has(two) ? two : String(words[1]);
        assert.ok(KNOWN_COMMANDS.has(name), `${where(b)}: patron ${name} is not a command`);
        // The CLI's own parser (strict) refuses an option it does not have; --help then stops before running.
        const options = [...line.matchAll(/(?<![\w-])(--[a-z][a-z-]*)/g)].flatMap((m) => [m[1] ?? '', 'x']);
        const out: string[] = [];
        const code = await runCli({
          argv: [...name.split(' '), ...options, '--help'],
          env: {},
          io: { stdout: (t) => out.push(t), stderr: (t) => out.push(t), readStdin: async () => '' },
        });
        assert.equal(code, 0, `${where(b)}: "${line}": ${out.join('').split('\n')[0]}`);
      }
    });
  }
});

describe('`json` blocks', () => {
  for (const b of blocks.filter((x) => x.lang === 'json' && x.attrs['no-run'] === undefined && !x.attrs.jsonrpc)) {
    test(`${where(b)} parses${typeof b.attrs.config === 'string' ? ` and is a valid ${b.attrs.config}` : ''}`, () => {
      const variable = b.attrs.config;
      if (typeof variable !== 'string') {
        JSON.parse(b.code);
        return;
      }
      // A configuration example may leave out what is the reader's own: "0x…" an address (each another one),
      // "https://…" a URL, "…" any string.
      let placeholders = 0xa0;
      const filled = b.code
        .replace(/"0x…[^"]*"/g, () => `"0x${(++placeholders).toString(16).padStart(40, '0')}"`)
        .replace(/"https:\/\/…[^"]*"/g, '"https://rpc.example"')
        .replace(/"…"/g, '"x"');
      JSON.parse(filled);
      loadConfig({ PATRON_DEV_CHAIN: 'false', PATRON_DATA_DIR: tmpdir(), [variable]: filled });
    });
  }
});

describe('`ts` blocks type-check against the installed SDKs', { skip: skipOnPg }, () => {
  const ts = blocks.filter((b) => b.lang === 'ts' && b.attrs['no-run'] === undefined);
  test(`${ts.length} snippets`, { skip: ts.length === 0 }, () => {
    const dir = path.join(ROOT, 'test-artifacts/docs-snippets');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const names = new Map<string, CodeBlock>();
    for (const b of ts) {
      const name = `${b.file.replace(/[/.]/g, '_')}_${b.line}.ts`;
      names.set(name, b);
      writeFileSync(path.join(dir, name), `${b.code}\n`);
    }
    const tsconfig = { extends: '../../tsconfig.json', compilerOptions: { noEmit: true }, include: ['*.ts'] };
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    const tsc = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], {
      encoding: 'utf8',
      timeout: 240_000,
    });
    const report = tsc.stdout.replace(/^(\S+?\.ts)\((\d+),(\d+)\)/gm, (at, f: string, l: string, c: string) => {
      const b = names.get(path.basename(f));
      return b === undefined ? at : `${b.file}:${b.line + Number(l)}:${c}`;
    });
    assert.equal(tsc.status, 0, `tsc on the docs' TypeScript snippets:\n${report}${tsc.stderr}`);
  });
});

describe('`sh`, `ts run` and `json jsonrpc` blocks run against a Patron on 127.0.0.1', { skip: skipOnPg }, () => {
  const runs = blocks.filter(
    (b) =>
      (b.lang === 'sh' && b.attrs['no-run'] === undefined && !b.attrs.synopsis) ||
      (b.lang === 'ts' && b.attrs['no-run'] === undefined && b.attrs.run === true) ||
      b.attrs.jsonrpc === true,
  );
  const dataDir = mkdtempSync(path.join(tmpdir(), 'patron-docs-'));
  const binDir = path.join(dataDir, 'bin');
  let service: ServiceProcess | undefined;
  let env: Record<string, string> = {};

  before(async () => {
    // The docs' examples use these as a reader's shell has them; missing, every block using one would fail obscurely.
    for (const tool of ['bash', 'curl', 'jq', 'sqlite3']) {
      const found = spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
      assert.ok(found, `the docs' sh blocks need ${tool} on the PATH (apt-get install ${tool}; .ci/run installs it)`);
    }
    // `patron` on the PATH: the CLI from the sources (the installed bin runs the same file, compiled).
    mkdirSync(binDir);
    const tsx = import.meta.resolve('tsx');
    const shim = `#!/bin/sh\nexec "${process.execPath}" --import "${tsx}" "${ROOT}/src/cli/bin.ts" "$@"\n`;
    writeFileSync(path.join(binDir, 'patron'), shim);
    chmodSync(path.join(binDir, 'patron'), 0o755);
    // A clean environment: nothing of the test run's configuration (a DATABASE_URL, PATRON_*) reaches the service.
    const base = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith('PATRON_') && k !== 'DATABASE_URL' && k !== 'NODE_ENV'),
    );
    service = spawnService({ PATRON_DATA_DIR: path.join(dataDir, 'data') }, { baseEnv: base, cwd: ROOT });
    const url = await service.baseUrl(120_000);
    const deadline = Date.now() + 30_000;
    while (!/paymaster {3}http/.test(service.output()) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    // The first start's banner: the demo account's credentials, which the docs call AUTH_TOKEN and API_KEY.
    const authToken = /authToken {3}(\S+)/.exec(service.output())?.[1];
    const apiKey = /apiKey {6}(\S+)/.exec(service.output())?.[1];
    assert.ok(authToken !== undefined && apiKey !== undefined, `no demo credentials in:\n${service.output()}`);
    const dapps = await (
      await fetch(`${url}/api/admin/dapps`, { headers: { authorization: `Bearer ${authToken}` } })
    ).json();
    const dappId = z.object({ data: z.array(z.object({ dappId: z.string() })).length(1) }).parse(dapps).data[0]?.dappId;
    // The dev bundler's URL as a client finds it: in /api/chains beside the dev chain (the banner prints it too).
    const chains = z
      .object({ chains: z.array(z.object({ embedded: z.boolean(), bundlerUrl: z.string().nullable().optional() })) })
      .parse(await (await fetch(`${url}/api/chains`)).json());
    const bundlerUrl = chains.chains.find((c) => c.embedded)?.bundlerUrl;
    assert.ok(typeof bundlerUrl === 'string', `the docs' Patron runs no dev bundler:\n${service.output()}`);
    env = {
      ...base,
      PATH: `${binDir}:${process.env.PATH ?? ''}`,
      PATRON_URL: url,
      AUTH_TOKEN: authToken,
      API_KEY: apiKey,
      BUNDLER_URL: bundlerUrl,
      DAPP_ID: String(dappId),
      PATRON_DATA_DIR: path.join(dataDir, 'data'),
      HOST: '127.0.0.1',
      PORT: new URL(url).port,
    };
  });
  after(async () => {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('docs/reference/rest-api.md names every route of the served /openapi.json, with its method', async () => {
    const doc = readFileSync(path.join(ROOT, 'docs/reference/rest-api.md'), 'utf8').split('\n');
    const openapi = z
      .object({ paths: z.record(z.string(), z.record(z.string(), z.unknown())) })
      .parse(await (await fetch(`${env.PATRON_URL}/openapi.json`)).json());
    const missing: string[] = [];
    for (const [route, operations] of Object.entries(openapi.paths)) {
      for (const method of Object.keys(operations).map((m) => m.toUpperCase())) {
        const named = new RegExp(`${route.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w/{])`);
        if (!doc.some((line) => named.test(line) && new RegExp(`\\b${method}\\b`).test(line))) {
          missing.push(`${method} ${route}`);
        }
      }
    }
    assert.deepEqual(missing, []);
  });

  for (const b of runs) {
    test(`${where(b)} ${b.lang}${b.attrs.jsonrpc === true ? ' jsonrpc' : ''}`, async () => {
      if (b.lang === 'json') return await answeredJsonRpc(b, env);
      if (b.lang === 'ts') return runTs(b, env);
      const cwd = b.attrs.cwd === 'repo' ? ROOT : mkdtempSync(path.join(dataDir, 'sh-'));
      const timeout = Number(b.attrs.timeout ?? 60) * 1000;
      const r = spawnSync('bash', ['-euo', 'pipefail', '-c', b.code], { cwd, env, encoding: 'utf8', timeout });
      assert.equal(
        r.status,
        0,
        `${where(b)} exited ${r.status ?? r.signal}:\n${b.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`,
      );
      if (typeof b.attrs.stdout === 'string') assert.match(r.stdout, new RegExp(b.attrs.stdout), where(b));
    });
  }
});

/**
 * A `ts run` block, as a reader pastes it into a file of a project with the SDKs installed: run by tsx in its own
 * process with the docs' variables in its environment. It fails the test when it exits non-zero (an op not
 * included throws in the SDK or in the snippet) or when its output does not match `stdout="regex"`.
 */
function runTs(b: CodeBlock, env: Record<string, string>): void {
  // Inside the checkout, so that the snippet's imports resolve to the SDKs installed here.
  const dir = path.join(ROOT, 'test-artifacts/docs-snippets-run');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${b.file.replace(/[/.]/g, '_')}_${b.line}.ts`);
  writeFileSync(file, `${b.code}\n`);
  const timeout = Number(b.attrs.timeout ?? 120) * 1000;
  const r = spawnSync(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, env, encoding: 'utf8', timeout });
  const report = `${where(b)} exited ${r.status ?? r.signal}:\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
  assert.equal(r.status, 0, report);
  if (typeof b.attrs.stdout === 'string') assert.match(r.stdout, new RegExp(b.attrs.stdout), report);
}

/** A JSON-RPC request example, sent to the demo dApp's paymaster URL: answered with a result (matching `result=`). */
async function answeredJsonRpc(b: CodeBlock, env: Record<string, string>): Promise<void> {
  const request = z.object({ jsonrpc: z.literal('2.0'), id: z.union([z.number(), z.string()]) }).passthrough();
  const sent = request.parse(JSON.parse(b.code));
  const post = () =>
    fetch(`${env.PATRON_URL}/api/v1/31337/${env.API_KEY}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: b.code,
    });
  // A POST on a kept-alive connection the server has just closed as idle fails once; fetch retries only GETs.
  const res = await post().catch(post);
  const answer = z
    .object({
      jsonrpc: z.literal('2.0'),
      id: z.unknown(),
      result: z.unknown().optional(),
      error: z.unknown().optional(),
    })
    .parse(await res.json());
  assert.equal(answer.id, sent.id, `${where(b)}: the id is echoed`);
  assert.ok(answer.result !== undefined && answer.error === undefined, `${where(b)}: ${JSON.stringify(answer)}`);
  if (typeof b.attrs.result === 'string')
    assert.match(JSON.stringify(answer.result), new RegExp(b.attrs.result), where(b));
}
