// run.mjs is the TypeScript-SDK contender of the throughput benchmark
// (internal/bench): it runs one query through the official SDK
// against the fake CLI, prints one JSON line of measurements (the same
// fields as gorunner), then waits for stdin to close so that the driver can
// read its peak RSS from /proc before it exits.
//
//   node run.mjs <claude|codex> <fake CLI path> [slow events]
import { query } from '@anthropic-ai/claude-agent-sdk';
import { Codex } from '@openai/codex-sdk';

const [cli, fake, slowArg] = process.argv.slice(2);
const slow = Number(slowArg || 0);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function consume(iterable, start, r) {
  for await (const ev of iterable) {
    if (r.events === 0) r.ttfe_ns = Math.round((performance.now() - start) * 1e6);
    r.events++;
    if (slow > 0) {
      await sleep(1);
      if (r.events >= slow) return;
    }
  }
}

const r = { wall_ns: 0, ttfe_ns: 0, events: 0 };
try {
  const start = performance.now();
  if (cli === 'claude') {
    const q = query({ prompt: 'Fix the failing tests.', options: { pathToClaudeCodeExecutable: fake } });
    await consume(q, start, r);
  } else if (cli === 'codex') {
    const codex = new Codex({ codexPathOverride: fake });
    const thread = codex.startThread({ skipGitRepoCheck: true });
    const { events } = await thread.runStreamed('Fix the failing tests.');
    await consume(events, start, r);
  } else {
    throw new Error(`no TypeScript SDK for ${cli}`);
  }
  r.wall_ns = Math.round((performance.now() - start) * 1e6);
} catch (e) {
  r.err = String(e && e.message ? e.message : e).slice(0, 500);
}
process.stdout.write(JSON.stringify(r) + '\n');
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
