// Compares the conformance suite's results against the fixture server directly
// and through toolfold. Called by run.sh; prints a table, optionally writes a
// JSON summary, exits 1 if a scenario that passes directly fails through
// toolfold (or toolfold did not start).
//
// Full messages and details are in summary.json; the printed report clips them.
//
// Results layout (under --results DIR):
//   scenarios.txt                      `conformance list --server` output
//   direct/checks/server-<scenario>-<timestamp>/checks.json
//   toolfold/checks/server-<scenario>-<timestamp>/checks.json
//   toolfold-start-failed              present when toolfold did not start
//   direct/TIMEOUT, toolfold/TIMEOUT   present when a suite run timed out
import fs from "node:fs";
import path from "node:path";

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const results = opt("--results");
const summaryFile = opt("--summary");
const sides = ["direct", "toolfold"].filter((s) => !args.includes(`--no-${s}`));

function read(file) {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

// scenario name -> checks, for one side.
function loadSide(side) {
  const dir = path.join(results, side, "checks");
  const out = new Map();
  let entries = [];
  try {
    entries = fs.readdirSync(dir).sort(); // timestamps sort; the last run wins
  } catch {
    return out;
  }
  for (const e of entries) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(e);
    if (!m) continue;
    const text = read(path.join(dir, e, "checks.json"));
    let checks;
    try {
      checks = JSON.parse(text);
    } catch {
      checks = [{ id: "checks.json", status: "FAILURE", errorMessage: `unreadable checks.json in ${e}` }];
    }
    out.set(m[1], checks);
  }
  return out;
}

function verdict(checks, side) {
  if (side === "toolfold" && startFailed) return { status: "not run" };
  if (!checks) return { status: "no result" };
  const count = (s) => checks.filter((c) => c.status === s).length;
  const failures = checks
    .filter((c) => c.status === "FAILURE")
    .map((c) => ({ id: c.id, message: c.errorMessage ?? c.description, details: c.details }));
  return {
    status: failures.length ? "FAIL" : "pass",
    passed: count("SUCCESS"),
    failed: failures.length,
    warnings: count("WARNING"),
    failures,
  };
}

// A check can pass on an empty answer (resources-list passes with no
// resources). Where a passing check reports a count (toolCount, resourceCount,
// promptCount, ...), toolfold must report at least what the fixture does:
// with no prefix and no filter it fronts the fixture's whole surface.
function shortfalls(direct, through) {
  const out = [];
  for (const d of direct ?? []) {
    const t = (through ?? []).find((c) => c.id === d.id);
    if (!t || !d.details || !t.details) continue;
    for (const [k, v] of Object.entries(d.details)) {
      if (/Count$/.test(k) && typeof v === "number" && typeof t.details[k] === "number" && t.details[k] < v) {
        out.push({ id: d.id, key: k, direct: v, toolfold: t.details[k] });
      }
    }
  }
  return out;
}

const clip = (t, n) => (t.length > n ? t.slice(0, n) + "…" : t);

const startFailed = read(path.join(results, "toolfold-start-failed"))?.trim();
const data = Object.fromEntries(sides.map((s) => [s, loadSide(s)]));

// Every scenario the suite lists, in its order, then any other with results.
const listed = [];
for (const line of (read(path.join(results, "scenarios.txt")) ?? "").split("\n")) {
  if (/^Client scenarios/.test(line)) break;
  const m = /^\s+-\s+(\S+)/.exec(line);
  if (m) listed.push(m[1]);
}
const seen = new Set(sides.flatMap((s) => [...data[s].keys()]));
const names = [...listed.filter((n) => seen.has(n)), ...[...seen].filter((n) => !listed.includes(n))];
if (startFailed && !data.direct?.size) names.push(...listed.filter((n) => !names.includes(n)));

const rows = names.map((name) => {
  const row = { name };
  for (const s of sides) row[s] = verdict(data[s].get(name), s);
  if (sides.length === 2 && row.direct.status === "pass" && row.toolfold.status === "pass") {
    row.toolfold.shortfalls = shortfalls(data.direct.get(name), data.toolfold.get(name));
    if (row.toolfold.shortfalls.length) row.toolfold.status = "hollow";
  }
  row.regression =
    sides.length === 2 && row.direct.status === "pass" && row.toolfold.status !== "pass";
  return row;
});

const cell = (v) => {
  if (!v) return "-";
  if (v.status === "pass") return `pass (${v.passed})`;
  if (v.status === "FAIL") return `FAIL (${v.failed}/${v.passed + v.failed})`;
  if (v.status === "hollow") return `passes, but ${v.shortfalls.map((f) => `${f.key} ${f.toolfold}/${f.direct}`).join(", ")}`;
  return v.status;
};
const header = ["scenario", ...sides.map((s) => (s === "direct" ? "direct" : "through toolfold"))];
const table = [header, ...rows.map((r) => [r.name, ...sides.map((s) => cell(r[s])) , r.regression ? "<- regression" : ""])];
const widths = header.map((_, i) => Math.max(...table.map((r) => (r[i] ?? "").length)));
const lines = table.map((r) => r.map((c, i) => (c ?? "").padEnd(widths[i] ?? 0)).join("  ").trimEnd());
lines.splice(1, 0, widths.map((w) => "-".repeat(w)).join("  "));
console.log(lines.join("\n"));
console.log();

for (const s of sides) {
  const passing = rows.filter((r) => r[s].status === "pass").length;
  const timedOut = read(path.join(results, s, "TIMEOUT"));
  console.log(
    `${s === "direct" ? "direct" : "through toolfold"}: ${passing} of ${rows.length} scenarios pass` +
      (timedOut ? ` (the suite run timed out: ${timedOut.trim()})` : ""),
  );
}

const regressions = rows.filter((r) => r.regression);
if (startFailed) {
  console.log(`\n${startFailed}`);
  console.log("No scenario could run through toolfold; see toolfold-server.log in " + results);
}
if (regressions.length && !startFailed) {
  console.log(`\nScenarios that pass directly but fail through toolfold (${regressions.length}):`);
  for (const r of regressions) {
    console.log(`- ${r.name}: ${r.toolfold.status}`);
    for (const f of r.toolfold.shortfalls ?? []) {
      console.log(`    ${f.id}: passes, but ${f.key} is ${f.toolfold} through toolfold and ${f.direct} directly`);
    }
    for (const f of r.toolfold.failures ?? []) {
      console.log(`    ${f.id}: ${clip(f.message ?? "", 300)}`);
      // The message often quotes the offending JSON-RPC message already.
      if (f.details && !(f.message ?? "").includes("message: {")) {
        console.log(`      details: ${clip(JSON.stringify(f.details), 400)}`);
      }
    }
  }
}
// Direct failures are information (the fixture's own gaps), not regressions.
const directFails = sides.includes("direct") ? rows.filter((r) => r.direct.status !== "pass") : [];
if (directFails.length) {
  console.log(`\nNot passing directly either (not counted): ${directFails.map((r) => r.name).join(", ")}`);
}

if (summaryFile) {
  fs.writeFileSync(
    summaryFile,
    JSON.stringify(
      {
        sides,
        toolfoldStartError: startFailed ?? null,
        regressions: regressions.map((r) => r.name),
        scenarios: rows,
      },
      null,
      2,
    ) + "\n",
  );
}

if (sides.length === 2 && (startFailed || regressions.length)) {
  console.log(
    startFailed
      ? "\nFAIL: toolfold did not start, so every scenario that passes directly is unverified through it."
      : `\nFAIL: ${regressions.length} scenario(s) pass directly but not through toolfold: ${regressions.map((r) => r.name).join(", ")}`,
  );
  process.exit(1);
}
if (sides.length === 2) console.log("\nOK: every scenario that passes directly also passes through toolfold.");
