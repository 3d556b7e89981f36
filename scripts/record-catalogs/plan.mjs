// plan.mjs prints what record-catalogs.sh must install for the named
// servers, one item a line: "npm <spec>", "node22", "go <module>@v<version>".
import { sdk, node22, pinnedDeps, pick } from "./servers.mjs";

const todo = pick(process.argv.slice(2));
const lines = new Set([sdk, ...pinnedDeps].map((p) => `npm ${p.pkg}@${p.version}`));
for (const s of todo) {
  if (s.module) lines.add(`go ${s.module}@v${s.version}`);
  else lines.add(`npm ${s.install || `${s.pkg}@${s.version}`}`);
  if (s.node22) lines.add(`node22 ${node22.pkg}@${node22.version}`);
}
console.log([...lines].join("\n"));
