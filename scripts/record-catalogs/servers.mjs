// The servers whose tools/list answers testdata/catalogs holds, each at the
// exact version recorded there. Every credential below is a DUMMY: these
// servers answer tools/list locally; none of them can reach an account.
//   pkg, version: the npm package and its pinned version
//   install:      the npm spec when it differs from pkg@version (an alias)
//   bin:          which bin entry, when the package has several
//   node22:       the server needs Node 22 (record-catalogs.sh installs one)
//   nodeArgs:     node flags before the script (a resolve hook)
//   module:       a Go server, installed with go install module@v<version>
// "$WORK" in an argument or value is the recording's scratch folder.
export const sdk = { pkg: "@modelcontextprotocol/sdk", version: "1.32.2" };
export const node22 = { pkg: "node", version: "22.23.3" };
// Installed beside the servers, at the top of the tree: servers that build
// their schemas with the SDK's zod write them differently under zod 4 (no
// "additionalProperties": false, other key order), and the recorded
// catalogs were made with zod 3 at the top.
export const pinnedDeps = [{ pkg: "zod", version: "3.25.76" }];

export const servers = [
  // the reference servers (modelcontextprotocol/servers)
  { name: "everything", pkg: "@modelcontextprotocol/server-everything", version: "2026.8.31", args: ["stdio"] },
  { name: "filesystem", pkg: "@modelcontextprotocol/server-filesystem", version: "2026.8.31", args: ["$WORK/fsroot"] },
  { name: "memory", pkg: "@modelcontextprotocol/server-memory", version: "2026.8.31", env: { MEMORY_FILE_PATH: "$WORK/memory.jsonl" } },
  { name: "sequential-thinking", pkg: "@modelcontextprotocol/server-sequential-thinking", version: "2026.8.31" },
  { name: "github-legacy", pkg: "@modelcontextprotocol/server-github", version: "2025.4.8", env: { GITHUB_PERSONAL_ACCESS_TOKEN: "dummy" } },
  { name: "slack", pkg: "@modelcontextprotocol/server-slack", version: "2025.4.25", env: { SLACK_BOT_TOKEN: "xoxb-dummy", SLACK_TEAM_ID: "T00000000" } },
  // Port 9 (discard) on loopback: nothing answers, nothing leaves the machine.
  { name: "gitlab", pkg: "@modelcontextprotocol/server-gitlab", version: "2025.4.25", env: { GITLAB_PERSONAL_ACCESS_TOKEN: "dummy", GITLAB_API_URL: "http://127.0.0.1:9/api/v4" } },
  { name: "postgres", pkg: "@modelcontextprotocol/server-postgres", version: "0.6.2", args: ["postgresql://dummy:dummy@127.0.0.1:9/dummy"] },
  { name: "puppeteer", pkg: "@modelcontextprotocol/server-puppeteer", version: "2025.5.12" },
  { name: "brave-search", pkg: "@modelcontextprotocol/server-brave-search", version: "0.6.2", env: { BRAVE_API_KEY: "dummy" } },
  { name: "google-maps", pkg: "@modelcontextprotocol/server-google-maps", version: "0.6.2", env: { GOOGLE_MAPS_API_KEY: "dummy" } },
  // vendor and community servers
  { name: "playwright", pkg: "@playwright/mcp", version: "0.0.83", args: ["--headless", "--isolated"] },
  { name: "notion", pkg: "@notionhq/notion-mcp-server", version: "2.5.2", env: { NOTION_TOKEN: "ntn_dummy" } },
  { name: "context7", pkg: "@upstash/context7-mcp", version: "4.1.1" },
  // @stripe/mcp 0.3 only relays to Stripe's remote server; 0.2.5 builds its
  // tools locally, so it is installed under an alias of its own.
  { name: "stripe", pkg: "stripe-mcp-local", version: "0.2.5", install: "stripe-mcp-local@npm:@stripe/mcp@0.2.5", args: ["--tools=all", "--api-key=sk_test_dummy"] },
  { name: "supabase", pkg: "@supabase/mcp-server-supabase", version: "0.13.0", args: ["--access-token=sbp_dummy", "--features=account,database,debugging,development,functions,branching,storage"] },
  { name: "firecrawl", pkg: "firecrawl-mcp", version: "3.26.0", node22: true, env: { FIRECRAWL_API_KEY: "fc-dummy" } },
  { name: "kubernetes", pkg: "mcp-server-kubernetes", version: "4.1.7" },
  { name: "cloudflare", pkg: "@cloudflare/mcp-server-cloudflare", version: "0.2.0", args: ["run", "dummyaccount"], env: { CLOUDFLARE_API_TOKEN: "dummy", CLOUDFLARE_ACCOUNT_ID: "dummyaccount" } },
  { name: "sentry", pkg: "@sentry/mcp-server", version: "0.39.0", node22: true, args: ["--access-token=dummy"] },
  // 1.2.8 imports the SDK without ".js" extensions; the hook adds them.
  { name: "heroku", pkg: "@heroku/mcp-server", version: "1.2.8", nodeArgs: ["--import", "$WORK/add-js-ext.mjs"], env: { HEROKU_API_KEY: "dummy" } },
  { name: "hubspot", pkg: "@hubspot/mcp-server", version: "0.4.0", env: { PRIVATE_APP_ACCESS_TOKEN: "dummy" } },
  { name: "browserbase", pkg: "@browserbasehq/mcp-server-browserbase", version: "2.4.3", env: { BROWSERBASE_API_KEY: "dummy", BROWSERBASE_PROJECT_ID: "dummy", GEMINI_API_KEY: "dummy" } },
  { name: "tavily", pkg: "tavily-mcp", version: "0.2.22", env: { TAVILY_API_KEY: "tvly-dummy" } },
  { name: "exa", pkg: "exa-mcp-server", version: "3.4.1", env: { EXA_API_KEY: "dummy" } },
  { name: "desktop-commander", pkg: "@wonderwhy-er/desktop-commander", version: "0.2.52", bin: "desktop-commander" },
  { name: "airtable", pkg: "airtable-mcp-server", version: "1.14.0", env: { AIRTABLE_API_KEY: "patdummy" } },
  { name: "twilio", pkg: "@twilio-alpha/mcp", version: "0.7.0", args: ["AC00000000000000000000000000000000/SK00000000000000000000000000000000:dummy", "--services", "twilio_api_v2010"] },
  { name: "mongodb", pkg: "mongodb-mcp-server", version: "3.0.4", env: { MDB_MCP_TELEMETRY: "disabled" } },
  { name: "azure", pkg: "@azure/mcp", version: "2.0.5", args: ["server", "start"], env: { AZURE_MCP_COLLECT_TELEMETRY: "false", DOTNET_CLI_TELEMETRY_OPTOUT: "1" } },
  { name: "azure-all", pkg: "@azure/mcp", version: "2.0.5", args: ["server", "start", "--mode", "all"], env: { AZURE_MCP_COLLECT_TELEMETRY: "false", DOTNET_CLI_TELEMETRY_OPTOUT: "1" } },
  { name: "chrome-devtools", pkg: "chrome-devtools-mcp", version: "1.11.0", bin: "chrome-devtools-mcp", args: ["--headless", "--isolated"], env: { CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: "1" } },
  { name: "antv-chart", pkg: "@antv/mcp-server-chart", version: "0.9.10" },
  { name: "figma", pkg: "figma-developer-mcp", version: "0.13.2", args: ["--stdio"], env: { FIGMA_API_KEY: "figd_dummy" } },
  { name: "circleci", pkg: "@circleci/mcp-server-circleci", version: "0.20.0", env: { CIRCLECI_TOKEN: "dummy" } },
  // a Go server
  { name: "grafana", module: "github.com/grafana/mcp-grafana/cmd/mcp-grafana", version: "1.6.3", args: ["-t", "stdio"], env: { GRAFANA_URL: "http://127.0.0.1:9", GRAFANA_SERVICE_ACCOUNT_TOKEN: "glsa_dummy" } },
];

// pick returns the servers named (all with no names), failing on a name
// that is not listed so a typo never records nothing quietly.
export function pick(names) {
  if (!names.length) return servers;
  const unknown = names.filter((n) => !servers.some((s) => s.name === n));
  if (unknown.length) throw new Error(`unknown server(s): ${unknown.join(", ")}; the servers are ${servers.map((s) => s.name).join(", ")}`);
  return servers.filter((s) => names.includes(s.name));
}
