// A client of the grouping draft (io.modelcontextprotocol/grouping),
// written from the draft's text on the official TypeScript SDK: it declares
// the extension, checks the server declares it, lists every group through
// the paginated groups/list, rebuilds the tree from each group's
// _meta["io.modelcontextprotocol/groups"] (its parents), lists the tools
// and resolves each tool's membership in the same key against the groups,
// then, for each group the plan chooses, keeps the tools of that group and
// of every group below it (its own disclosure: the draft leaves it to the
// client) and calls the chosen tool among them. It counts
// notifications/groups/list_changed and, when told, waits for one and
// lists the groups again.
//
// Usage: node draftclient.mjs '<plan JSON>'
//   plan: {"command": "...", "args": [...]} for stdio, or {"url": "..."};
//         "protocol": "2026-07-28" for that protocol (self-contained requests,
//         as in client.mjs), else 2025-11-25 through the SDK's session;
//         "calls": [{"group": "...", "tool": "...", "arguments": {...}}];
//         "change": {"group": "...", "tool": "...", "arguments": {...},
//                    "timeoutMs": N}: call it, wait for groups/list_changed,
//                    list the groups again.
// It prints one JSON report; the Go test (draftclient_ts_test.go) checks it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResultSchema } from "@modelcontextprotocol/sdk/types.js";

const EXT = "io.modelcontextprotocol/grouping";
const KEY = "io.modelcontextprotocol/groups";
const CHANGED = "notifications/groups/list_changed";

const plan = JSON.parse(process.argv[2]);
const modern = plan.protocol === "2026-07-28";
const clientInfo = { name: "ts-draft-client", version: "1.0.0" };
const capabilities = { extensions: { [EXT]: {} } };
const client = new Client(clientInfo, { capabilities });

let heard = 0;
let waiters = [];
const noteChanged = () => {
  heard++;
  const w = waiters;
  waiters = [];
  for (const resolve of w) resolve();
};
// The SDK knows no schema for the draft's notification: take it from the
// handler of notifications nothing else handles.
client.fallbackNotificationHandler = async (n) => {
  if (n.method === CHANGED) noteChanged();
};

const headers = (url, init) => {
  // 2026-07-28 POSTs name their method (and a call its tool) in headers.
  if (modern && init?.method === "POST" && typeof init.body === "string") {
    const msg = JSON.parse(init.body);
    const h = new Headers(init.headers);
    if (msg.method) h.set("Mcp-Method", msg.method);
    if (msg.method === "tools/call" && msg.params?.name) h.set("Mcp-Name", msg.params.name);
    init = { ...init, headers: h };
  }
  return fetch(url, init);
};
const transport = plan.url
  ? new StreamableHTTPClientTransport(new URL(plan.url), { fetch: headers })
  : new StdioClientTransport({ command: plan.command, args: plan.args ?? [], env: { ...process.env, ...(plan.env ?? {}) }, stderr: "inherit" });

let rpc;
if (modern) {
  let nextId = 1;
  const pending = new Map();
  transport.onmessage = (msg) => {
    if (msg.id !== undefined && pending.has(msg.id)) {
      pending.get(msg.id)(msg);
      pending.delete(msg.id);
    } else if (msg.method === CHANGED) {
      noteChanged();
    }
  };
  rpc = async (method, params = {}) => {
    const id = nextId++;
    const answered = new Promise((resolve) => pending.set(id, resolve));
    const _meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": clientInfo,
      "io.modelcontextprotocol/clientCapabilities": capabilities,
    };
    await transport.send({ jsonrpc: "2.0", id, method, params: { ...params, _meta } });
    const msg = await answered;
    if (msg.error) throw Object.assign(new Error(msg.error.message), { code: msg.error.code });
    return msg.result;
  };
} else {
  rpc = (method, params = {}) => client.request({ method, params }, ResultSchema);
}

// all follows nextCursor through every page of a list method.
const all = async (method, field) => {
  const out = [];
  let cursor;
  let pages = 0;
  do {
    const res = await rpc(method, cursor ? { cursor } : {});
    out.push(...(res[field] ?? []));
    cursor = res.nextCursor;
    if (++pages > 1000) throw new Error(`${method} never ends`);
  } while (cursor);
  return out;
};

const memberOf = (item) => (Array.isArray(item?._meta?.[KEY]) ? item._meta[KEY] : []);

// tree rebuilds the hierarchy: a group with no parent is a root; a parent
// the list lacks is a problem the report names.
const readTree = async () => {
  const groups = await all("groups/list", "groups");
  const names = new Set(groups.map((g) => g.name));
  const children = {};
  const roots = [];
  const problems = [];
  for (const g of groups) {
    const parents = memberOf(g);
    if (parents.length === 0) roots.push(g.name);
    for (const p of parents) {
      if (!names.has(p)) problems.push(`group ${g.name} names a parent ${p} that groups/list lacks`);
      (children[p] ??= []).push(g.name);
    }
  }
  for (const list of Object.values(children)) list.sort();
  roots.sort();
  return { names, children, roots, problems, count: groups.length };
};

// subtree is a group and every group below it.
const subtree = (tree, name) => {
  const seen = new Set();
  const walk = (n) => {
    if (seen.has(n)) return;
    seen.add(n);
    for (const c of tree.children[n] ?? []) walk(c);
  };
  walk(name);
  return seen;
};

const call = async (name, args) => {
  const params = { name, arguments: args ?? {} };
  const res = modern ? await rpc("tools/call", params) : await client.callTool(params);
  const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  return { isError: !!res.isError, text };
};

const report = { declared: null, groups: 0, roots: [], children: {}, problems: [], tools: 0, ungrouped: [], calls: [], heard: 0 };
try {
  let caps;
  if (modern) {
    await transport.start();
    transport.setProtocolVersion?.("2026-07-28");
    caps = (await rpc("server/discover"))?.capabilities;
  } else {
    await client.connect(transport);
    caps = client.getServerCapabilities();
  }
  report.declared = caps?.extensions?.[EXT] ?? null;
  if (!report.declared) throw new Error(`the server does not declare ${EXT}`);

  let tree = await readTree();
  Object.assign(report, { groups: tree.count, roots: tree.roots, children: tree.children });
  report.problems.push(...tree.problems);
  const tools = modern ? await all("tools/list", "tools") : (await client.listTools()).tools;
  report.tools = tools.length;
  for (const t of tools) {
    const groups = memberOf(t);
    if (groups.length === 0) report.ungrouped.push(t.name);
    for (const g of groups) if (!tree.names.has(g)) report.problems.push(`tool ${t.name} names a group ${g} that groups/list lacks`);
  }
  report.ungrouped.sort();
  for (const c of plan.calls ?? []) {
    const active = subtree(tree, c.group);
    const chosen = tools.filter((t) => memberOf(t).some((g) => active.has(g))).map((t) => t.name).sort();
    const entry = { group: c.group, chosen, tool: c.tool };
    if (chosen.includes(c.tool)) Object.assign(entry, await call(c.tool, c.arguments));
    else entry.missing = true;
    report.calls.push(entry);
  }
  if (plan.change) {
    const before = heard;
    report.changeCall = await call(plan.change.tool, plan.change.arguments);
    const deadline = Date.now() + (plan.change.timeoutMs ?? 10000);
    while (heard === before && Date.now() < deadline) {
      await Promise.race([new Promise((r) => waiters.push(r)), new Promise((r) => setTimeout(r, deadline - Date.now()))]);
    }
    tree = await readTree();
    report.after = { groups: [...tree.names].sort(), children: tree.children };
  }
} catch (err) {
  report.error = String(err?.stack ?? err);
} finally {
  report.heard = heard;
  if (modern) await transport.close().catch(() => {});
  else await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(report) + "\n");
