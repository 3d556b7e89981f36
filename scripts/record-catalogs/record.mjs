// record.mjs connects to each named server over stdio with the official
// TypeScript SDK client, asks for tools/list (every page) and writes
// <out>/<server>.json as {"tools": [...]}, pretty-printed with two spaces,
// the tools exactly as the SDK client returns them.
//
//   node record.mjs --out DIR [server...]      (run by record-catalogs.sh)
//
// Each server runs in the scratch folder with only PATH, a HOME of its own
// made with mkdtemp (so no real dotfile, token cache or config is read or
// written), NODE_ENV and its dummy variables from servers.mjs: nothing else
// of the calling shell reaches it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { pick } from "./servers.mjs";

const WORK = dirname(fileURLToPath(import.meta.url));
const TIMEOUT_MS = Number(process.env.TIMEOUT_MS || 60000);
const NODE22 = join(WORK, "node22", "node_modules", ".bin", "node");

const argv = process.argv.slice(2);
const outAt = argv.indexOf("--out");
if (outAt < 0 || !argv[outAt + 1]) throw new Error("usage: node record.mjs --out DIR [server...]");
const OUT = resolve(argv[outAt + 1]);
argv.splice(outAt, 2);
mkdirSync(join(WORK, "fsroot"), { recursive: true });

const sub = (v) => v.replaceAll("$WORK", WORK);

function launch(s) {
  if (s.module) return { command: join(WORK, "bin", s.module.split("/").pop()), args: (s.args || []).map(sub) };
  const pj = JSON.parse(readFileSync(join(WORK, "node_modules", s.pkg, "package.json"), "utf8"));
  // The pin is the point of a recording: refuse any other version.
  if (pj.version !== s.version) throw new Error(`${s.pkg} is ${pj.version}, pinned ${s.version}`);
  let bin = pj.bin;
  if (typeof bin === "object") bin = s.bin ? bin[s.bin] : Object.values(bin)[0];
  if (!bin) throw new Error(`${s.pkg} has no bin entry`);
  const node = s.node22 ? NODE22 : process.execPath;
  return { command: node, args: [...(s.nodeArgs || []).map(sub), resolve(WORK, "node_modules", s.pkg, bin), ...(s.args || []).map(sub)] };
}

async function record(s) {
  const home = mkdtempSync(join(tmpdir(), `record-${s.name}-home-`));
  let transport, stderr = "";
  try {
    const { command, args } = launch(s);
    const env = { PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`, HOME: home, NODE_ENV: "production" };
    for (const [k, v] of Object.entries(s.env || {})) env[k] = sub(v);
    transport = new StdioClientTransport({ command, args, cwd: WORK, env, stderr: "pipe" });
    transport.stderr?.on("data", (d) => { stderr = (stderr + d.toString()).slice(-2000); });
    const client = new Client({ name: "toolfold-record-catalogs", version: "1.0.0" }, { capabilities: {} });
    let timer;
    const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer in ${TIMEOUT_MS} ms`)), TIMEOUT_MS); });
    const work = (async () => {
      await client.connect(transport);
      const tools = [];
      let cursor, pages = 0;
      do {
        const res = await client.listTools(cursor ? { cursor } : {}, { timeout: TIMEOUT_MS });
        tools.push(...res.tools);
        cursor = res.nextCursor;
      } while (cursor && ++pages < 100);
      return { tools };
    })();
    const result = await Promise.race([work, timeout]).finally(() => clearTimeout(timer));
    if (!result.tools.length) throw new Error("tools/list returned no tools");
    writeFileSync(join(OUT, `${s.name}.json`), JSON.stringify(result, null, 2) + "\n");
    console.log(`ok   ${s.name}: ${result.tools.length} tools`);
    await client.close().catch(() => {});
    return true;
  } catch (e) {
    console.error(`FAIL ${s.name}: ${String(e?.message || e)}\n${stderr.trim() ? "  its stderr ends:\n" + stderr.trim() : ""}`);
    await transport?.close().catch(() => {});
    return false;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

// Two at a time: enough on a small machine, and a slow server holds no one up.
const todo = pick(argv);
let next = 0, failed = 0;
await Promise.all([0, 1].map(async () => {
  while (next < todo.length) if (!(await record(todo[next++]))) failed++;
}));
console.log(`${todo.length - failed} of ${todo.length} recorded`);
process.exit(failed ? 1 : 0); // some servers leave handles open
