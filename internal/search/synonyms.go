package search

import "strings"

// DefaultSynonyms is the built-in table of interchangeable words: general
// English and developer vocabulary, never the name of one catalog's tool.
// Each line is one group; members are separated by commas and may be
// phrases ("pull request"). A query word that belongs to a group also looks
// for the other members, at Options.SynonymWeight of an exact match.
//
// To extend it, add a member to a group or a new line here (and a case to
// TestSynonymExpansion), or pass Options.ExtraSynonyms for catalog-specific
// vocabulary. Keep groups tight: members should be substitutable in a
// request ("remove a file" = "delete a file"), not merely related.
var DefaultSynonyms = []string{
	// verbs
	"create, add, new, make, insert, register, set up, generate, open, append",
	"delete, remove, destroy, drop, erase, purge, forget, uninstall, get rid of",
	"list, get, show, fetch, retrieve, read, view, display, enumerate, see, load, which, what's in",
	"search, find, query, lookup, look up, grep, seek",
	"update, edit, modify, change, alter, patch, set, switch",
	"run, execute, exec, invoke, trigger, launch, start",
	"start, begin, launch, initiate, kick off",
	"stop, terminate, kill, halt, abort, cancel, hang up",
	"save, store, write, persist, put",
	"memory, remember, memorize, recall, forget, knowledge graph",
	"send, post, deliver",
	"reply, answer, respond, response",
	"copy, clone, fork, duplicate",
	"move, relocate, rename",
	"deploy, release, ship, publish, install",
	"rollback, roll back, revert, undo",
	"restart, reboot, reload",
	"navigate, go to, visit, browse, open url",
	"click, press, tap",
	"hover, mouse over",
	"type, enter",
	"input, field, box, text box, textbox",
	"upload, attach, put",
	"download, export",
	"scrape, extract",
	"monitor, watch, track",
	"notify, alert, notification",
	"describe, explain, detail, inspect",
	"count, how many, number of, total",
	"check, verify, validate",
	"compare, diff",
	"summarize, summary, overview",
	"schedule, cron",
	"visualize, plot, chart, graph, diagram",
	// nouns
	"file, document",
	"issue, bug, ticket, defect, bug report",
	"error, exception, crash, failure, fail, fault",
	"comment, note, remark",
	"configuration, config, setting, settings, preference, option",
	"information, info, detail, metadata",
	"statistic, stat, metric",
	"user, member, person, people, account, who",
	"customer, client",
	"credential, secret, password",
	"image, picture, photo, img, screenshot",
	"screenshot, screen capture, screen shot, screengrab",
	"dialog, popup, modal",
	"terminal, shell, console, command line",
	"webpage, web page, website, site, page",
	"internet, web, online",
	"web search, google, search the web, search online",
	"link, url",
	"documentation, docs, doc, manual, reference",
	"repository, project, codebase",
	"price, cost, pricing, fee",
	"invoice, bill",
	"coupon, discount, promo code, promotion",
	"size, big, large, how big",
	"tree, hierarchy",
	"allow, permit, authorize",
	"current, now, right now, currently, present",
	"multiple, several, many, batch, bulk",
	"associate, link, relate",
	"coordinate, latitude, longitude, lat, lng, geocode",
	"elevation, altitude, height, above sea level",
	"refund, money back, reimburse",
	"balance, funds, money",
	"performance, speed, latency, slow, fast",
	"aggregate, aggregation, group by",
	"sum, add up, add, total",
	"record, row, entry",
	"column, field, attribute, property",
	"enable, turn on, activate, switch on",
	"disable, turn off, deactivate, switch off",
}

// DefaultEquivalents are groups whose members name the same thing:
// abbreviations, spellings and exact equivalents. A member stands in for
// another at Options.EquivalentWeight, nearly as much as the word itself:
// "make a folder" should find create_directory as surely as "make a
// directory" does. Same format as DefaultSynonyms.
var DefaultEquivalents = []string{
	"directory, dir, folder",
	"repository, repo",
	"pull request, pr, merge request, mr",
	"sms, text message",
	"database, db",
	"kubernetes, k8s",
	"environment, env",
	"variable, var",
	"environment variable, env var",
	"application, app",
	"organization, org",
	"virtual machine, vm",
	"javascript, js",
	"typescript, ts",
	"python, py",
	"markdown, md",
	"yaml, yml",
	"postgres, postgresql, pg",
	"mongo, mongodb",
	"identifier, id",
	"email, e-mail, mail",
	"message, msg",
}

// synonym is one stand-in for a query word or phrase.
type synonym struct {
	stems []string
	// equivalent marks a spelling, abbreviation or exact equivalent
	// ("repo" for repository), which counts nearly as the word itself.
	equivalent bool
}

// synonymTable maps an analysed phrase (stems joined by a space) to the
// other members of its groups. It is built once per Index and read-only
// afterwards.
type synonymTable struct {
	alternatives map[string][]synonym
	maxPhrase    int // longest member, in words
}

// newSynonymTable builds the table from groups of equivalents and groups
// of synonyms; a pair in both is an equivalent.
func newSynonymTable(equivalents []string, synonyms ...[]string) *synonymTable {
	t := &synonymTable{alternatives: map[string][]synonym{}, maxPhrase: 1}
	t.addGroups(equivalents, true)
	for _, lines := range synonyms {
		t.addGroups(lines, false)
	}
	return t
}

func (t *synonymTable) addGroups(lines []string, equivalent bool) {
	for _, line := range lines {
		var members [][]string
		for _, raw := range strings.Split(line, ",") {
			member := analyzePhrase(raw)
			if len(member) == 0 {
				continue
			}
			members = append(members, member)
			t.maxPhrase = max(t.maxPhrase, len(member))
		}
		for i, m := range members {
			key := strings.Join(m, " ")
			for j, other := range members {
				if i != j && !containsPhrase(t.alternatives[key], other) && strings.Join(other, " ") != key {
					t.alternatives[key] = append(t.alternatives[key], synonym{stems: other, equivalent: equivalent})
				}
			}
		}
	}
}

// analyzePhrase stems every word of a synonym member, keeping stop words:
// members such as "go to" and "how many" consist of them.
func analyzePhrase(text string) []string {
	var out []string
	splitWords(text, func(w string) { out = append(out, stem(w)) })
	return out
}

func containsPhrase(list []synonym, p []string) bool {
	for _, q := range list {
		if strings.Join(q.stems, " ") == strings.Join(p, " ") {
			return true
		}
	}
	return false
}
